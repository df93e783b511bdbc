package etcdrelocatetest_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cozystack/tenantkit/etcdrelocate/etcdrelocatetest"
	"github.com/cozystack/tenantkit/localenv"
)

// TestMonitorStoppedMembers stops (SIGSTOP) members of a real 3-member
// etcd under the monitor: one stopped follower leaves fault tolerance 0
// and no loss of quorum; a second one loses quorum for real, and the
// monitor must still see it (a silent member is settled by a quorum read,
// which the cluster then refuses).
func TestMonitorStoppedMembers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd")
	}
	t.Parallel()
	env := localenv.StartT(t, localenv.Config{EtcdMembers: 3, SkipAPIServer: true})
	cli, err := env.Etcd().Client()
	require.NoError(t, err)
	t.Cleanup(func() { cli.Close() })
	ctx := context.Background()
	var followers []int
	for _, m := range env.Etcd().Members() {
		st, err := cli.Status(ctx, m.ClientURL)
		require.NoError(t, err)
		if st.Leader != st.Header.MemberId {
			followers = append(followers, m.PID())
		}
	}
	require.Len(t, followers, 2)
	mon := etcdrelocatetest.StartMonitorT(t, cli, etcdrelocatetest.MonitorConfig{Interval: 100 * time.Millisecond})
	stop := func(pid int) {
		require.NoError(t, syscall.Kill(pid, syscall.SIGSTOP))
		t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGCONT) })
	}
	stop(followers[0])
	require.Eventually(t, func() bool { return mon.Report().MinFaultTolerance == 0 }, time.Minute, 100*time.Millisecond)
	time.Sleep(3 * time.Second)
	rep := mon.Report()
	require.Zero(t, rep.AtLoss, "one follower of three stopped: quorum kept (%+v)", rep)
	require.Equal(t, 0, rep.MinFaultTolerance)
	stop(followers[1])
	require.Eventually(t, func() bool { return mon.Report().AtLoss > 0 }, time.Minute, 100*time.Millisecond,
		"two of three stopped: quorum lost, and the monitor must see it")
	rep = mon.Stop()
	require.Negative(t, rep.MinFaultTolerance)
	t.Logf("%+v", rep)
}
