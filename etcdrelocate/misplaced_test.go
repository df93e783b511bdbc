package etcdrelocate_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/cozystack/tenantkit/etcdrelocate"
	"github.com/cozystack/tenantkit/etcdrelocate/etcdrelocatetest"
	"github.com/cozystack/tenantkit/localenv/etcdlayout"
)

// TestRelocateMisplacedClaim replays the StatefulSet controller winning the
// race for the member's claim (issue 19): the moment the learner is added,
// the held claim is let go and an unpinned claim of the same name appears,
// bound by the scheduler to a volume on another node. The executor must
// remove the learner, move again and converge on the target. The learner
// was added less than a second before it is removed, so etcd gives the
// next add of the same peer URL in that second the removed ID and answers
// "member not found"; the add must wait for the next second, not fail.
func TestRelocateMisplacedClaim(t *testing.T) {
	t.Parallel()
	te := startTenant(t, etcdlayout.Config{Tenant: "misplaced"})
	cli := te.client(t)
	load := etcdrelocatetest.StartLoadT(t, cli, etcdrelocatetest.LoadConfig{Prefix: "/misplaced/"})
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	r := te.relocator(t, nil)
	member := "etcd-1"
	s := te.waitHealthy(t, r, member)
	target := te.freeNode(t, s)
	source := te.podNode(t, member)
	var firstLearner uint64
	var elsewhere string
	rr := te.relocator(t, func(e etcdrelocate.Event) {
		if e.Step != etcdrelocate.StepAddLearner || e.Phase != etcdrelocate.EventDone || elsewhere != "" {
			return
		}
		ml, err := cli.MemberList(ctx)
		require.NoError(t, err)
		for _, m := range ml.Members {
			if m.IsLearner {
				firstLearner = m.ID
			}
		}
		elsewhere = te.stealClaim(t, ctx, member, source, target)
	})
	plan, err := rr.Plan(ctx, etcdrelocate.Request{Namespace: te.tenant.Namespace, Member: member, TargetNode: target,
		Options: etcdrelocate.Options{SnapshotDir: t.TempDir()}})
	require.NoError(t, err)
	res, err := rr.Execute(ctx, plan)
	require.NoError(t, err)
	require.NotEmpty(t, elsewhere, "the claim was stolen")
	require.NotZero(t, firstLearner)
	require.NotEqual(t, firstLearner, res.NewMemberID, "the misplaced learner was replaced")
	require.Equal(t, target, te.podNode(t, member))
	require.Empty(t, res.Verification.Problems)
	rep := load.Stop()
	load.CheckT(t, ctx, cli)
	t.Logf("claim bound on %s instead of %s; learner %s replaced by %s; moved in %s; load %d acknowledged, %d failed",
		elsewhere, target, etcdrelocate.FormatID(firstLearner), etcdrelocate.FormatID(res.NewMemberID), res.Duration.Round(100*time.Millisecond),
		rep.Acked, rep.Failed)
}

// stealClaim lets the relocation's held claim of pod go and creates the
// claim the StatefulSet controller would, bound to a free volume on a node
// other than source and target, as the scheduler binds an unpinned claim.
// It returns that node.
func (te *tenantEnv) stealClaim(t testing.TB, ctx context.Context, pod, source, target string) string {
	t.Helper()
	kube := te.tenant.Kube()
	claims := kube.CoreV1().PersistentVolumeClaims(te.tenant.Namespace)
	name := etcdlayout.VolumeClaimTemplate + "-" + pod
	// The PV binder and the relocation write the claim too: on a conflict,
	// read it again.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		held, err := claims.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		held.Finalizers = slices.DeleteFunc(held.Finalizers, func(f string) bool { return strings.HasPrefix(f, "etcdrelocate.") })
		_, err = claims.Update(ctx, held, metav1.UpdateOptions{})
		return err
	})
	require.NoError(t, err)
	sts, err := kube.AppsV1().StatefulSets(te.tenant.Namespace).Get(ctx, etcdlayout.StatefulSetName, metav1.GetOptions{})
	require.NoError(t, err)
	tmpl := sts.Spec.VolumeClaimTemplates[0]
	pvs, err := kube.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	var pv *corev1.PersistentVolume
	node := ""
	for i := range pvs.Items {
		v := &pvs.Items[i]
		n := pvNode(v)
		if v.Status.Phase == corev1.VolumeAvailable && v.Spec.ClaimRef == nil && n != source && n != target && n != "" {
			pv, node = v, n
			break
		}
	}
	require.NotNil(t, pv, "no free volume on another node")
	claim := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: te.tenant.Namespace, Labels: sts.Spec.Selector.MatchLabels},
		Spec:       *tmpl.Spec.DeepCopy(),
	}
	claim.Spec.VolumeName = pv.Name
	claim.Spec.StorageClassName = &pv.Spec.StorageClassName
	require.Eventually(t, func() bool {
		_, err := claims.Create(ctx, claim, metav1.CreateOptions{})
		return err == nil
	}, time.Minute, 5*time.Millisecond, "create the stolen claim")
	return node
}

func pvNode(v *corev1.PersistentVolume) string {
	if v.Spec.NodeAffinity == nil || v.Spec.NodeAffinity.Required == nil {
		return ""
	}
	for _, term := range v.Spec.NodeAffinity.Required.NodeSelectorTerms {
		for _, e := range term.MatchExpressions {
			if e.Key == corev1.LabelHostname && len(e.Values) == 1 {
				return e.Values[0]
			}
		}
	}
	return ""
}
