package localenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestInotifyShortage(t *testing.T) {
	for _, tc := range []struct {
		name               string
		nodes, used, limit int
		short              bool
	}{
		{"1+3 on an idle host", 4, 0, 128, false},
		{"1+3 exactly fits", 4, 128 - 69, 128, false},
		{"1+3 one short", 4, 128 - 68, 128, true},
		{"beside another 1+3 cluster", 4, 69, 128, true},
		{"one node beside another 1+3 cluster", 1, 69, 128, false},
		{"raised limit", 4, 69, 512, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := inotifyShortage(tc.nodes, tc.used, tc.limit)
			if !tc.short {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrKindUnavailable)
			var se *InotifyShortageError
			require.True(t, errors.As(err, &se))
			require.Equal(t, InotifyShortageError{Nodes: tc.nodes, Need: tc.nodes*inotifyPerNode + inotifyControlPlane, InUse: tc.used, Limit: tc.limit}, *se)
			require.Contains(t, err.Error(), "fs.inotify.max_user_instances")
		})
	}
}

// TestProcessInotify counts against the real /proc: an instance this
// process opens is counted, and gone once closed.
func TestProcessInotify(t *testing.T) {
	before, err := processInotify("/proc/self")
	require.NoError(t, err)
	fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC)
	require.NoError(t, err)
	during, err := processInotify("/proc/self")
	require.NoError(t, err)
	require.NoError(t, syscall.Close(fd))
	after, err := processInotify("/proc/self")
	require.NoError(t, err)
	require.Equal(t, []int{before + 1, before}, []int{during, after})
}

// TestInotifyInUse sums a made-up /proc: only the given uid's processes,
// only inotify descriptors; a process gone meanwhile is left out.
func TestInotifyInUse(t *testing.T) {
	proc := t.TempDir()
	fake := func(pid string, uid int, targets ...string) {
		dir := filepath.Join(proc, pid)
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "fd"), 0o755))
		status := fmt.Sprintf("Name:\tx\nUid:\t%d\t%d\t%d\t%d\n", uid+7, uid, uid, uid) // real uid differs
		require.NoError(t, os.WriteFile(filepath.Join(dir, "status"), []byte(status), 0o644))
		for i, target := range targets {
			require.NoError(t, os.Symlink(target, filepath.Join(dir, "fd", fmt.Sprint(i))))
		}
	}
	fake("1", 0, "anon_inode:inotify", "/dev/null", "anon_inode:inotify", "socket:[42]")
	fake("20", 1000, "anon_inode:inotify")
	fake("300", 0, "anon_inode:[eventpoll]", "anon_inode:inotify")
	require.NoError(t, os.MkdirAll(filepath.Join(proc, "4000"), 0o755)) // exited: no status
	require.NoError(t, os.MkdirAll(filepath.Join(proc, "self"), 0o755))

	for uid, want := range map[int]int{0: 3, 1000: 1, 7: 0} {
		n, ok := inotifyInUse(proc, uid)
		require.True(t, ok)
		require.Equal(t, want, n, "uid %d", uid)
	}
}

func TestProcessEUID(t *testing.T) {
	euid, err := processEUID("/proc/self")
	require.NoError(t, err)
	require.Equal(t, os.Geteuid(), euid)
	_, err = processEUID(t.TempDir())
	require.Error(t, err)
}

// TestStartKindInotifyShortage asks Start for a cluster with more nodes
// than the host's fs.inotify.max_user_instances can hold: Start refuses it
// with an *InotifyShortageError before it builds or creates anything. It
// needs root (other users' descriptors cannot be counted) and an engine
// (Start asks it first), and creates no cluster, so it is not a kind test.
func TestStartKindInotifyShortage(t *testing.T) {
	if testing.Short() {
		t.Skip("uses docker")
	}
	if os.Geteuid() != 0 {
		t.Skip("counting root's inotify instances needs root")
	}
	if exec.Command("docker", "info").Run() != nil {
		t.Skip("no container engine answers")
	}
	limit, err := readIntFile(inotifyLimitPath)
	require.NoError(t, err)
	kindContainers := func() string {
		out, err := exec.Command("docker", "ps", "-aq", "--filter", "label=io.x-k8s.kind.cluster").Output()
		require.NoError(t, err)
		return string(out)
	}
	before := kindContainers()
	workers := limit / inotifyPerNode // with the control plane, more than limit can hold
	_, err = Start(t.Context(), Config{Provider: Kind, KindCluster: KindConfig{Workers: workers}})
	require.ErrorIs(t, err, ErrKindUnavailable)
	var se *InotifyShortageError
	require.ErrorAs(t, err, &se)
	require.Equal(t, workers+1, se.Nodes)
	require.Equal(t, limit, se.Limit)
	require.Greater(t, se.Need, se.Limit-se.InUse)
	require.Contains(t, err.Error(), "fs.inotify.max_user_instances")
	require.Equal(t, before, kindContainers(), "Start created kind containers")
}
