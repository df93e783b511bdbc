package etcdrelocate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/cozystack/tenantkit/localenv"
)

// leaseEnv starts a real kube-apiserver and returns relocators on it whose
// leases last d, and the namespace to use.
func leaseEnv(t *testing.T, d time.Duration) (kubernetes.Interface, func(identity string) *Relocator, string) {
	t.Helper()
	env := localenv.StartT(t, localenv.Config{})
	cs, err := kubernetes.NewForConfig(env.RESTConfig())
	require.NoError(t, err)
	ns := "tenant-lease"
	_, err = cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	require.NoError(t, err)
	mk := func(identity string) *Relocator {
		r, err := New(Config{Kube: cs, Identity: identity, LeaseDuration: d})
		require.NoError(t, err)
		return r
	}
	return cs, mk, ns
}

// TestLeaseExclusion: while one executor holds the lease (and renews it),
// another is refused with a *LockedError naming it; after release the
// other takes it at once.
func TestLeaseExclusion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, mk, ns := leaseEnv(t, 10*time.Second)
	a, err := mk("exec-a").takeLease(ctx, ns, leaseName("etcd"), nil)
	require.NoError(t, err)
	// Across several renewals, every attempt is refused.
	for i := 0; i < 3; i++ {
		_, err = mk("exec-b").takeLease(ctx, ns, leaseName("etcd"), nil)
		var le *LockedError
		require.ErrorAs(t, err, &le)
		require.ErrorIs(t, err, ErrLocked)
		require.Equal(t, a.holder, le.Holder)
		require.Contains(t, le.Holder, "exec-a/")
		require.False(t, le.Expires.IsZero())
		require.Equal(t, "etcd-relocate", le.Lease)
		t.Log(err)
		time.Sleep(4 * time.Second)
	}
	require.NoError(t, a.check(ctx))
	require.NoError(t, a.confirm(ctx))
	a.release(ctx)
	b, err := mk("exec-b").takeLease(ctx, ns, leaseName("etcd"), nil)
	require.NoError(t, err)
	b.release(ctx)
}

// TestLeaseTakeoverAfterExpiry: a holder that stops renewing (a dead
// process) is taken over only after its lease went unrenewed for a full
// duration on the taker's clock; the old holder is then fenced: its next
// check fails with ErrLeaseLost, its fenced clients do not write, and its
// release leaves the new holder's lease alone.
func TestLeaseTakeoverAfterExpiry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := 3 * time.Second
	cs, mk, ns := leaseEnv(t, d)
	ra := mk("exec-a")
	var lostA error
	a, err := ra.takeLease(ctx, ns, leaseName("etcd"), func(err error) { lostA = err })
	require.NoError(t, err)
	// A "dies": it stops renewing without releasing.
	close(a.stop)
	<-a.done
	died := time.Now()
	var b *lease
	refusals := 0
	for deadline := time.Now().Add(2 * time.Minute); ; {
		b, err = mk("exec-b").takeLease(ctx, ns, leaseName("etcd"), nil)
		if err == nil {
			break
		}
		require.ErrorIs(t, err, ErrLocked)
		require.True(t, time.Now().Before(deadline), "not taken over within the budget: %v", err)
		refusals++
		time.Sleep(200 * time.Millisecond)
	}
	defer b.release(ctx)
	waited := time.Since(died)
	t.Logf("taken over %s after the holder died (%d refusals before)", waited.Round(10*time.Millisecond), refusals)
	require.GreaterOrEqual(t, waited, d, "taken over before the lease went unrenewed for its duration")

	// A is fenced before its next change.
	err = a.check(ctx)
	require.ErrorIs(t, err, ErrLeaseLost)
	require.ErrorIs(t, lostA, ErrLeaseLost)
	fr := ra.fencedRelocator(a)
	_, err = fr.cfg.Kube.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "written-by-a"}}, metav1.CreateOptions{})
	require.ErrorIs(t, err, ErrLeaseLost)
	_, err = cs.CoreV1().ConfigMaps(ns).Get(ctx, "written-by-a", metav1.GetOptions{})
	require.True(t, apierrors.IsNotFound(err), "a fenced client wrote: %v", err)
	a.release(ctx)
	got, err := cs.CoordinationV1().Leases(ns).Get(ctx, "etcd-relocate", metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, b.holder, *got.Spec.HolderIdentity)
	require.EqualValues(t, 1, *got.Spec.LeaseTransitions)
}

// TestLeaseStolen: a lease taken from its holder behind its back (an
// Update by hand) fences the holder at its next confirm, and no fenced
// call reaches the server afterwards.
func TestLeaseStolen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cs, mk, ns := leaseEnv(t, 30*time.Second)
	r := mk("exec-a")
	a, err := r.takeLease(ctx, ns, leaseName("etcd"), nil)
	require.NoError(t, err)
	defer a.release(ctx)
	stealLease(t, cs, ns, "etcd-relocate")
	err = a.confirm(ctx)
	require.ErrorIs(t, err, ErrLeaseLost)
	require.Contains(t, err.Error(), "thief")
	fr := r.fencedRelocator(a)
	err = fr.cfg.Kube.CoreV1().ConfigMaps(ns).Delete(ctx, "anything", metav1.DeleteOptions{})
	require.ErrorIs(t, err, ErrLeaseLost, "the call was made (NotFound would come from the server)")
	_, err = fencedEtcd{f: a.check}.MemberRemove(ctx, 1)
	require.ErrorIs(t, err, ErrLeaseLost)
	require.True(t, errors.Is(a.check(ctx), ErrLeaseLost))
}

// stealLease makes "thief" the holder of the lease by a plain Update.
func stealLease(t testing.TB, cs kubernetes.Interface, ns, name string) {
	t.Helper()
	ctx := context.Background()
	thief := "thief"
	for i := 0; ; i++ {
		l, err := cs.CoordinationV1().Leases(ns).Get(ctx, name, metav1.GetOptions{})
		require.NoError(t, err)
		l.Spec.HolderIdentity = &thief
		_, err = cs.CoordinationV1().Leases(ns).Update(ctx, l, metav1.UpdateOptions{})
		if !apierrors.IsConflict(err) || i == 10 {
			require.NoError(t, err)
			return
		}
	}
}

// TestCheckpointWritesConditional: checkpoint writes are conditional on
// the resourceVersion the run read or wrote last. The run's own write
// whose answer was lost is recognised; anyone else's write stops the run
// with ErrLeaseLost, and finish does not delete a checkpoint it did not
// write last.
func TestCheckpointWritesConditional(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cs, mk, ns := leaseEnv(t, 30*time.Second)
	p := &Plan{Namespace: ns, Cluster: "etcd", Layout: LayoutStatefulSet, TargetNode: "node-d", ClusterID: 0xc1, Voters: 3,
		Member: MemberRef{ID: 0x101, PeerURL: "https://etcd-1.etcd-headless." + ns + ".svc:2380", Pod: "etcd-1", PVC: "data-etcd-1", Node: "node-b"}}
	p.build()
	x := &run{r: mk("exec-a"), p: p, res: &Result{}, cp: CheckpointFor(p)}
	data, err := x.cp.Encode()
	require.NoError(t, err)
	created, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "etcd-relocate"},
		Data: map[string]string{checkpointKey: string(data)}}, metav1.CreateOptions{})
	require.NoError(t, err)
	x.cpCM = created

	x.cp.CordonedSource = true
	require.NoError(t, x.saveCheckpoint(ctx))
	require.NotEqual(t, created.ResourceVersion, x.cpCM.ResourceVersion)
	// The same write again from the stale resourceVersion: our own write
	// whose answer was lost.
	x.cpCM = created
	require.NoError(t, x.saveCheckpoint(ctx))

	// Someone else writes the checkpoint.
	cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "etcd-relocate", metav1.GetOptions{})
	require.NoError(t, err)
	cm.Labels = map[string]string{"touched": "by-hand"}
	_, err = cs.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{})
	require.NoError(t, err)
	x.cp.SnapshotPath = "/tmp/snap"
	err = x.saveCheckpoint(ctx)
	require.ErrorIs(t, err, ErrLeaseLost)
	_, _, err = finishStep{}.Run(ctx, x)
	require.ErrorIs(t, err, ErrLeaseLost)
	got, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "etcd-relocate", metav1.GetOptions{})
	require.NoError(t, err, "finish deleted a checkpoint someone else wrote")
	require.NotContains(t, got.Data[checkpointKey], "/tmp/snap")
}

// TestLeaseTakeoverOfAGoneHolder: a Lease whose holder is a process of
// this machine that has exited (kill -9 leaves its Lease held) is taken
// over one call timeout after it is found, though it has 30 s to run; a
// holder that still runs, or one of another machine, is refused as before.
func TestLeaseTakeoverOfAGoneHolder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cs, _, ns := leaseEnv(t, 30*time.Second)
	if procIdentity(os.Getpid()) == "" {
		t.Skip("this system does not tell boot ID, PID namespace and start times")
	}
	dead := exec.Command("true")
	require.NoError(t, dead.Run())
	self := strings.Split(procIdentity(os.Getpid()), ".")
	hold := func(holder string) {
		now, secs := metav1.NewMicroTime(time.Now()), int32(30)
		l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "etcd-relocate", Namespace: ns},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &secs, AcquireTime: &now, RenewTime: &now}}
		_ = cs.CoordinationV1().Leases(ns).Delete(ctx, l.Name, metav1.DeleteOptions{})
		_, err := cs.CoordinationV1().Leases(ns).Create(ctx, l, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	r, err := New(Config{Kube: cs, Identity: "exec-b", LeaseDuration: 30 * time.Second, Timeouts: Timeouts{Call: 2 * time.Second}})
	require.NoError(t, err)
	for _, tc := range []struct {
		name, holder string
		gone         bool
	}{
		{"exited", fmt.Sprintf("exec-a/%d/00/proc=%s.%s.%d.%s", dead.Process.Pid, self[0], self[1], dead.Process.Pid, self[3]), true},
		{"running, another start time", fmt.Sprintf("exec-a/1/00/proc=%s.%s.%d.1", self[0], self[1], os.Getpid()), true},
		{"running", newHolderID("exec-a"), false},
		{"another boot", fmt.Sprintf("exec-a/%d/00/proc=ffff.%s.%d.%s", dead.Process.Pid, self[1], dead.Process.Pid, self[3]), false},
		{"no proc part", "exec-a/1/00", false},
	} {
		hold(tc.holder)
		require.Equal(t, tc.gone, holderGone(tc.holder), tc.name)
		var kv kubeView
		require.NoError(t, r.observeLease(ctx, ns, "etcd", &kv))
		require.Equal(t, tc.gone, kv.lease.gone, "observed: %s", tc.name)
		t0 := time.Now()
		l, err := r.takeLease(ctx, ns, leaseName("etcd"), nil)
		if !tc.gone {
			require.ErrorIs(t, err, ErrLocked, tc.name)
			continue
		}
		require.NoError(t, err, tc.name)
		took := time.Since(t0)
		t.Logf("%s: the Lease of a gone holder (30 s left) taken over in %s", tc.name, took.Round(10*time.Millisecond))
		require.GreaterOrEqual(t, took, 2*time.Second, "a call timeout is left for the dead holder's last request")
		require.Less(t, took, 20*time.Second)
		l.release(ctx)
	}
}
