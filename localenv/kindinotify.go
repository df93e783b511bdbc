package localenv

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The inotify instances a kind cluster holds, counted on a 1 control
// plane + 3 worker cluster of tenantkit's node image (69 in all): on each
// node its kubelet 7, systemd 4, dbus, containerd and kube-proxy 1 each;
// on the control plane also kube-controller-manager 7 and kube-apiserver 6.
const (
	inotifyPerNode      = 14
	inotifyControlPlane = 13
)

// inotifyLimitPath is the host's per-user limit on inotify instances. A
// kind node's processes run as root on the host, so they all count
// against root's limit, with every other root process's.
const inotifyLimitPath = "/proc/sys/fs/inotify/max_user_instances"

// InotifyShortageError is returned by Start, wrapping ErrKindUnavailable,
// when a kind cluster of Nodes nodes would not fit in the inotify
// instances root has left: its kubelets and systemd would fail
// "inotify_init: too many open files" part way. kind's known-issues page
// suggests raising fs.inotify.max_user_instances to 512 (Start never
// changes the host's sysctls).
type InotifyShortageError struct {
	// Nodes is the cluster's node count, control plane included.
	Nodes int
	// Need is about how many instances such a cluster holds.
	Need int
	// InUse is how many root's processes hold now.
	InUse int
	// Limit is fs.inotify.max_user_instances.
	Limit int
}

func (e *InotifyShortageError) Error() string {
	return fmt.Sprintf("localenv: a kind cluster of %d nodes holds about %d inotify instances; root's processes hold %d of the %d fs.inotify.max_user_instances allows (raise it, as kind's known issues suggest: sysctl fs.inotify.max_user_instances=512)",
		e.Nodes, e.Need, e.InUse, e.Limit)
}

func (e *InotifyShortageError) Unwrap() error { return ErrKindUnavailable }

// checkInotify returns an *InotifyShortageError when a kind cluster of
// nodes nodes does not fit in root's free inotify instances. Where they
// cannot be counted (another user's descriptors are unreadable unless
// this process is root), it returns nil: the check refuses only what it
// has counted.
func checkInotify(nodes int) error {
	limit, err := readIntFile(inotifyLimitPath)
	if err != nil {
		return nil
	}
	used, ok := inotifyInUse("/proc", 0)
	if !ok {
		return nil
	}
	return inotifyShortage(nodes, used, limit)
}

// inotifyShortage is checkInotify's arithmetic.
func inotifyShortage(nodes, used, limit int) error {
	need := nodes*inotifyPerNode + inotifyControlPlane
	if limit-used >= need {
		return nil
	}
	return &InotifyShortageError{Nodes: nodes, Need: need, InUse: used, Limit: limit}
}

// inotifyInUse counts the inotify descriptors of the processes under proc
// whose effective uid is uid. ok is false when a process of that uid
// could not be read (not this process's to read). A descriptor shared by
// processes counts once per process, so the count errs high.
func inotifyInUse(proc string, uid int) (n int, ok bool) {
	pids, err := filepath.Glob(filepath.Join(proc, "[0-9]*"))
	if err != nil {
		return 0, false
	}
	for _, dir := range pids {
		if euid, err := processEUID(dir); err != nil || euid != uid {
			continue // gone, or another user's
		}
		c, err := processInotify(dir)
		if err != nil {
			if os.IsNotExist(err) {
				continue // exited meanwhile
			}
			return 0, false
		}
		n += c
	}
	return n, true
}

// processInotify counts the inotify descriptors of one /proc/<pid>.
func processInotify(dir string) (int, error) {
	fds, err := os.ReadDir(filepath.Join(dir, "fd"))
	if err != nil {
		return 0, err
	}
	n := 0
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join(dir, "fd", fd.Name())); err == nil && target == "anon_inode:inotify" {
			n++
		}
	}
	return n, nil
}

// processEUID reads the effective uid from a /proc/<pid>/status.
func processEUID(dir string) (int, error) {
	b, err := os.ReadFile(filepath.Join(dir, "status"))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if rest, found := strings.CutPrefix(line, "Uid:"); found {
			f := strings.Fields(rest)
			if len(f) < 2 {
				break
			}
			return strconv.Atoi(f[1])
		}
	}
	return 0, fmt.Errorf("%s: no Uid line", dir)
}

// readIntFile reads a file holding one integer, as /proc/sys files do.
func readIntFile(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}
