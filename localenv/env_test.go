package localenv_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/cozystack/tenantkit/localenv"
)

func TestEnv_controlPlane(t *testing.T) {
	env := localenv.StartT(t, localenv.Config{})
	t.Logf("warm start of etcd + kube-apiserver: %s", env.StartDuration().Round(time.Millisecond))
	ctx := t.Context()

	t.Run("client-go round trip", func(t *testing.T) {
		cs := kubernetes.NewForConfigOrDie(env.RESTConfig())
		roundTrip(t, cs, "demo")
	})
	t.Run("kubeconfig file works", func(t *testing.T) {
		rc, err := clientcmd.BuildConfigFromFlags("", env.KubeconfigPath())
		require.NoError(t, err)
		_, err = kubernetes.NewForConfigOrDie(rc).CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{})
		require.NoError(t, err)
	})
	t.Run("discovery reports v1.37.2", func(t *testing.T) {
		v, err := kubernetes.NewForConfigOrDie(env.RESTConfig()).Discovery().ServerVersion()
		require.NoError(t, err)
		require.Equal(t, "v1.37.2", v.GitVersion)
	})
	t.Run("second apiserver is isolated", func(t *testing.T) {
		b, err := env.StartAPIServer(ctx, localenv.APIServerConfig{Name: "tenant-b"})
		require.NoError(t, err)
		csA := kubernetes.NewForConfigOrDie(env.RESTConfig())
		csB := kubernetes.NewForConfigOrDie(b.RESTConfig())
		roundTrip(t, csB, "only-in-b")
		_, err = csA.CoreV1().Namespaces().Get(ctx, "only-in-b", metav1.GetOptions{})
		require.True(t, apierrors.IsNotFound(err), "namespace of apiserver b visible in a: %v", err)
		_, err = csB.CoreV1().Namespaces().Get(ctx, "demo", metav1.GetOptions{})
		require.True(t, apierrors.IsNotFound(err), "namespace of apiserver a visible in b: %v", err)
		require.Len(t, env.APIServers(), 2)
	})
	for _, c := range env.Components() {
		t.Logf("%-16s %-8s %-28s rss %s", c.Name, c.Version, c.Endpoint, rss(c.Process.PID()))
	}
}

func TestEnv_etcdMembership(t *testing.T) {
	env := localenv.StartT(t, localenv.Config{EtcdMembers: 3})
	ctx := t.Context()
	cs := kubernetes.NewForConfigOrDie(env.RESTConfig())
	etcd := env.Etcd()
	require.Len(t, etcd.Members(), 3)

	cli, err := etcd.Client()
	require.NoError(t, err)
	defer cli.Close()
	// Kill a follower: with the leader gone a write may land in the
	// election and fail, which is etcd's behaviour, not this environment's.
	victim, survivor := follower(t, cli, etcd)
	require.NoError(t, victim.Kill())
	require.False(t, victim.Running())
	// Quorum (2 of 3) holds: writes through the apiserver still succeed.
	// The first write may still go out on the apiserver's stream to the
	// killed member and fail with Unavailable (seen in CI: "error reading
	// from server: EOF"); etcd's client does not retry a write, so the
	// apiserver returns it. Only that error is retried, briefly.
	roundTripPastLostMember(t, cs, "while-"+victim.Name+"-down")

	require.NoError(t, victim.Restart(ctx))
	require.Eventually(t, func() bool {
		st, err := cli.Status(ctx, victim.ClientURL)
		lead, err2 := cli.Status(ctx, survivor.ClientURL)
		return err == nil && err2 == nil && st.Leader != 0 && st.RaftAppliedIndex >= lead.RaftIndex-5
	}, 30*time.Second, 200*time.Millisecond, "restarted member did not catch up")

	learner, err := etcd.AddMember(ctx, localenv.AddMemberOptions{Learner: true})
	require.NoError(t, err)
	list, err := cli.MemberList(ctx)
	require.NoError(t, err)
	require.Len(t, list.Members, 4)
	var learners int
	for _, m := range list.Members {
		if m.IsLearner {
			learners++
		}
	}
	require.Equal(t, 1, learners)

	require.NoError(t, etcd.RemoveMember(ctx, learner.Name))
	require.NoError(t, etcd.RemoveMember(ctx, "etcd-2"))
	list, err = cli.MemberList(ctx)
	require.NoError(t, err)
	require.Len(t, list.Members, 2)

	voter, err := etcd.AddMember(ctx, localenv.AddMemberOptions{})
	require.NoError(t, err)
	require.Len(t, etcd.Members(), 3)
	roundTripPastLostMember(t, cs, "after-membership-changes") // etcd-2 was stopped
	_, err = cli.Status(ctx, voter.ClientURL)
	require.NoError(t, err)
}

func TestEnv_stopLeavesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	env, err := localenv.Start(t.Context(), localenv.Config{EtcdMembers: 3})
	require.NoError(t, err)
	_, err = env.StartAPIServer(t.Context(), localenv.APIServerConfig{Name: "second"})
	require.NoError(t, err)
	var pids []int
	for _, c := range env.Components() {
		pids = append(pids, c.Process.PID())
	}
	require.Len(t, pids, 5)
	dir := env.Dir()
	require.NoError(t, env.Stop())
	require.NoError(t, env.Stop(), "second Stop is a no-op")
	for _, pid := range pids {
		// Our own children are reaped by Stop, so the PID no longer exists.
		require.ErrorIs(t, syscall.Kill(pid, 0), syscall.ESRCH, "pid %d still alive", pid)
	}
	_, err = os.Stat(dir)
	require.True(t, os.IsNotExist(err), "directory %s left behind", dir)
	_, err = env.StartAPIServer(t.Context(), localenv.APIServerConfig{Name: "late"})
	require.ErrorIs(t, err, localenv.ErrStopped)
}

func TestStart_badConfig(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer busy.Close()
	busyPort := busy.Addr().(*net.TCPAddr).Port

	tests := []struct {
		name  string
		cfg   localenv.Config
		short bool // runs without building servers
		want  error
	}{
		{name: "no etcd members", cfg: localenv.Config{EtcdMembers: -1}, short: true, want: localenv.ErrInvalidConfig},
		{name: "unknown provider", cfg: localenv.Config{Provider: "vagrant"}, short: true, want: localenv.ErrInvalidConfig},
		{name: "missing etcd binary", cfg: localenv.Config{Binaries: localenv.Binaries{Etcd: "/nonexistent/etcd"}}, short: true, want: localenv.ErrIncompatibleBinary},
		{name: "apiserver port in use", cfg: localenv.Config{EtcdMembers: 1, APIServer: localenv.APIServerConfig{Port: busyPort}}, want: localenv.ErrPortInUse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if testing.Short() && !tt.short {
				t.Skip("integration test")
			}
			start := time.Now()
			env, err := localenv.Start(ctx, tt.cfg)
			if env != nil {
				env.Stop()
			}
			require.ErrorIs(t, err, tt.want)
			t.Logf("%v (after %s)", err, time.Since(start).Round(time.Millisecond))
		})
	}
}

func TestStart_serverThatCannotStart(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	// A "binary" that exits at once: the error must say so with its log,
	// quickly, instead of waiting for the start timeout.
	script := t.TempDir() + "/etcd"
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\necho 'etcd: cannot start: disk on fire' >&2\nexit 3\n"), 0o755))
	start := time.Now()
	_, err := localenv.Start(t.Context(), localenv.Config{Binaries: localenv.Binaries{Etcd: script}, EtcdMembers: 1})
	require.Error(t, err)
	require.Contains(t, err.Error(), "disk on fire")
	require.Less(t, time.Since(start), 30*time.Second)
}

// TestStart_kindWithoutEngine: where no container engine answers (here:
// no docker on PATH), the kind provider is unavailable, which StartT turns
// into a skip. TestKindCluster covers the provider where one answers.
func TestStart_kindWithoutEngine(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := localenv.Start(t.Context(), localenv.Config{Provider: localenv.Kind})
	require.ErrorIs(t, err, localenv.ErrKindUnavailable)
	require.ErrorContains(t, err, "no container engine answers")
}

func BenchmarkStart(b *testing.B) {
	for b.Loop() {
		env, err := localenv.Start(b.Context(), localenv.Config{})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(env.StartDuration().Seconds(), "s/start")
		if err := env.Stop(); err != nil {
			b.Fatal(err)
		}
	}
}

// follower returns a member that is not the leader and one that is.
func follower(t *testing.T, cli *clientv3.Client, etcd *localenv.EtcdCluster) (victim, leader *localenv.EtcdMember) {
	t.Helper()
	for _, m := range etcd.Members() {
		st, err := cli.Status(t.Context(), m.ClientURL)
		require.NoError(t, err)
		if st.Header.MemberId == st.Leader {
			leader = m
		} else if victim == nil {
			victim = m
		}
	}
	require.NotNil(t, victim, "no follower")
	require.NotNil(t, leader, "no leader")
	return victim, leader
}

// roundTrip creates a namespace and a ConfigMap in it through the
// apiserver and reads the ConfigMap back.
func roundTrip(t *testing.T, cs kubernetes.Interface, ns string) {
	t.Helper()
	roundTripCreating(t, cs, ns, func(_ string, create func() error) {
		t.Helper()
		require.NoError(t, create())
	})
}

// roundTripPastLostMember is roundTrip for the moment after an etcd
// member was killed or removed: a create that fails because the
// apiserver's etcd client sent it to the dead member is tried again (it
// may have committed before the connection broke, so AlreadyExists then
// counts as created). Any other error fails the test, and so does an
// Unavailable lasting 10 s.
func roundTripPastLostMember(t *testing.T, cs kubernetes.Interface, ns string) {
	t.Helper()
	roundTripCreating(t, cs, ns, func(what string, create func() error) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for attempt := 1; ; attempt++ {
			err := create()
			if err == nil || (attempt > 1 && apierrors.IsAlreadyExists(err)) {
				return
			}
			require.Truef(t, etcdUnavailable(err) && time.Now().Before(deadline),
				"create %s (attempt %d): %v", what, attempt, err)
			t.Logf("create %s: %v; trying again", what, err)
			time.Sleep(200 * time.Millisecond)
		}
	})
}

// roundTripCreating is the round trip, each create made through do.
func roundTripCreating(t *testing.T, cs kubernetes.Interface, ns string, do func(what string, create func() error)) {
	t.Helper()
	ctx := t.Context()
	do("namespace "+ns, func() error {
		_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		return err
	})
	want := map[string]string{"answer": "42", "ns": ns}
	do("configmap "+ns+"/cm", func() error {
		_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}, Data: want}, metav1.CreateOptions{})
		return err
	})
	got, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "cm", metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, want, got.Data)
}

// etcdUnavailable reports whether the apiserver passed on etcd's gRPC
// Unavailable: a 500 whose message is the gRPC error's text.
func etcdUnavailable(err error) bool {
	var st apierrors.APIStatus
	return errors.As(err, &st) && st.Status().Code == http.StatusInternalServerError &&
		strings.Contains(st.Status().Message, "code = Unavailable")
}

func rss(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "?"
	}
	var kb int
	for _, line := range strings.Split(string(b), "\n") {
		if _, err := fmt.Sscanf(line, "VmRSS: %d kB", &kb); err == nil {
			return fmt.Sprintf("%d MiB", kb/1024)
		}
	}
	return "?"
}
