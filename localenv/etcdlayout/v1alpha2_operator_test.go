package etcdlayout_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/cozystack/tenantkit/localenv"
	"github.com/cozystack/tenantkit/localenv/etcdlayout"
)

var etcdClusters = etcdlayout.EtcdMembers.GroupVersion().WithResource("etcdclusters")

func fourNodes() localenv.Config {
	return localenv.Config{Cluster: &localenv.ClusterConfig{
		Nodes: []localenv.NodeConfig{{Name: "node-a"}, {Name: "node-b"}, {Name: "node-c"}, {Name: "node-d"}},
	}}
}

// condition returns the EtcdCluster's condition of type typ as
// "Status/Reason" ("" when absent).
func condition(ec *unstructured.Unstructured, typ string) string {
	conds, _, _ := unstructured.NestedSlice(ec.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == typ {
			return fmt.Sprintf("%v/%v", m["status"], m["reason"])
		}
	}
	return ""
}

func pinTo(node string) map[string]any {
	return map[string]any{"nodeAffinity": map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{
		"nodeSelectorTerms": []any{map[string]any{"matchExpressions": []any{map[string]any{
			"key": corev1.LabelHostname, "operator": "In", "values": []any{node}}}}}}}}
}

func mergePatch(t *testing.T, dyn dynamic.Interface, ns string, spec map[string]any) {
	t.Helper()
	b := fmt.Appendf(nil, `{"spec":%s}`, mustJSON(t, spec))
	_, err := dyn.Resource(etcdClusters).Namespace(ns).Patch(t.Context(), "etcd", types.MergePatchType, b, metav1.PatchOptions{})
	require.NoError(t, err)
}

// waitCluster waits until cond holds for the EtcdCluster.
func waitCluster(t *testing.T, dyn dynamic.Interface, ns, what string, cond func(ec *unstructured.Unstructured) error) {
	t.Helper()
	eventually(t, 2*time.Minute, what, func(ctx context.Context) error {
		ec, err := dyn.Resource(etcdClusters).Namespace(ns).Get(ctx, "etcd", metav1.GetOptions{})
		if err != nil {
			return err
		}
		return cond(ec)
	})
}

// reconciled is the settled state: observed equals the pin, Available
// QuorumHealthy, Progressing Reconciled, no deadline.
func reconciled(affinity map[string]any) func(ec *unstructured.Unstructured) error {
	return func(ec *unstructured.Unstructured) error {
		got, _, _ := unstructured.NestedMap(ec.Object, "status", "observed", "affinity")
		_, deadline, _ := unstructured.NestedString(ec.Object, "status", "progressDeadline")
		switch {
		case fmt.Sprint(got) != fmt.Sprint(affinity):
			return fmt.Errorf("observed affinity %v", got)
		case condition(ec, "Progressing") != "False/Reconciled" || condition(ec, "Available") != "True/QuorumHealthy" || deadline:
			return fmt.Errorf("progressing %s, available %s, deadline %t", condition(ec, "Progressing"), condition(ec, "Available"), deadline)
		}
		return nil
	}
}

// TestV1alpha2_pinAloneSteersReplacement: with Cozystack's default
// (preferred) spread and no cordon, a required node affinity in the spec,
// once the operator has latched it into status.observed, alone places the
// replacement of a deleted member; the PDB follows quorum(max(voters,
// target)).
func TestV1alpha2_pinAloneSteersReplacement(t *testing.T) {
	env := localenv.StartT(t, fourNodes())
	ctx := t.Context()
	tn := etcdlayout.StartV1alpha2T(t, env, etcdlayout.Config{Tenant: "pin"})
	dyn, err := dynamic.NewForConfig(env.RESTConfig())
	require.NoError(t, err)
	waitCluster(t, dyn, tn.Namespace, "reconciled", reconciled(nil))
	pdb, err := tn.Kube().PolicyV1().PodDisruptionBudgets(tn.Namespace).Get(ctx, "etcd", metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, int32(2), pdb.Spec.MinAvailable.IntVal)

	names, err := tn.MemberNames(ctx)
	require.NoError(t, err)
	used := map[string]bool{}
	for _, n := range names {
		used[pod(t, tn, n).Spec.NodeName] = true
	}
	target := ""
	for _, n := range []string{"node-a", "node-b", "node-c", "node-d"} {
		if !used[n] {
			target = n
		}
	}
	require.NotEmpty(t, target)
	mergePatch(t, dyn, tn.Namespace, map[string]any{"affinity": pinTo(target)})
	waitCluster(t, dyn, tn.Namespace, "pin adopted", reconciled(pinTo(target)))
	require.NoError(t, dyn.Resource(etcdlayout.EtcdMembers).Namespace(tn.Namespace).Delete(ctx, names[0], metav1.DeleteOptions{}))
	require.NoError(t, tn.WaitAvailable(ctx, 3))
	after, err := tn.MemberNames(ctx)
	require.NoError(t, err)
	fresh := slices.DeleteFunc(slices.Clone(after), func(n string) bool { return slices.Contains(names, n) })
	require.Len(t, fresh, 1)
	require.Equal(t, target, pod(t, tn, fresh[0]).Spec.NodeName)
}

// TestV1alpha2_deadlineExceeded: a target the operator cannot reach (a
// fourth member pinned to a node that does not exist) ends, once the
// deadline passes, in Available=False/DeadlineExceeded; a spec edit is the
// documented intervention: the operator adopts it (RetryAfterDeadline) and
// scales down by deleting the newest member, the unschedulable one.
func TestV1alpha2_deadlineExceeded(t *testing.T) {
	env := localenv.StartT(t, fourNodes())
	ctx := t.Context()
	tn := etcdlayout.StartV1alpha2T(t, env, etcdlayout.Config{Tenant: "late"})
	dyn, err := dynamic.NewForConfig(env.RESTConfig())
	require.NoError(t, err)
	waitCluster(t, dyn, tn.Namespace, "reconciled", reconciled(nil))
	names, err := tn.MemberNames(ctx)
	require.NoError(t, err)

	mergePatch(t, dyn, tn.Namespace, map[string]any{"replicas": 4, "affinity": pinTo("nowhere"), "progressDeadlineSeconds": 3})
	waitCluster(t, dyn, tn.Namespace, "deadline exceeded", func(ec *unstructured.Unstructured) error {
		if c := condition(ec, "Available"); c != "False/DeadlineExceeded" {
			return errors.New("available " + c)
		}
		return nil
	})
	stuck, err := tn.MemberNames(ctx)
	require.NoError(t, err)
	require.Len(t, stuck, 4)

	mergePatch(t, dyn, tn.Namespace, map[string]any{"replicas": 3, "affinity": nil, "progressDeadlineSeconds": nil})
	waitCluster(t, dyn, tn.Namespace, "recovered", reconciled(nil))
	after, err := tn.MemberNames(ctx)
	require.NoError(t, err)
	require.Equal(t, names, after, "the newest (unschedulable) member was the one removed")
}

// TestV1alpha2_deletionGuard: with the chart's ValidatingAdmissionPolicy on
// the kube-apiserver, a plain delete of an EtcdMember is refused (403, also
// as a dry run), and allowed once the member carries the allow-deletion
// annotation; the operator (its ServiceAccount) replaces the member.
func TestV1alpha2_deletionGuard(t *testing.T) {
	env := localenv.StartT(t, fourNodes())
	ctx := t.Context()
	tn := etcdlayout.StartV1alpha2T(t, env, etcdlayout.Config{Tenant: "guard", DeletionGuard: true})
	dyn, err := dynamic.NewForConfig(env.RESTConfig())
	require.NoError(t, err)
	members := dyn.Resource(etcdlayout.EtcdMembers).Namespace(tn.Namespace)
	names, err := tn.MemberNames(ctx)
	require.NoError(t, err)
	victim := names[1]

	err = members.Delete(ctx, victim, metav1.DeleteOptions{})
	require.True(t, apierrors.IsForbidden(err), "plain delete: %v", err)
	require.ErrorContains(t, err, etcdlayout.AllowDeletionAnnotation)
	err = members.Delete(ctx, victim, metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
	require.True(t, apierrors.IsForbidden(err), "dry-run delete: %v", err)
	m, err := members.Get(ctx, victim, metav1.GetOptions{})
	require.NoError(t, err)
	require.Nil(t, m.GetDeletionTimestamp())

	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:"true"}}}`, etcdlayout.AllowDeletionAnnotation)
	_, err = members.Patch(ctx, victim, types.MergePatchType, patch, metav1.PatchOptions{})
	require.NoError(t, err)
	uid := m.GetUID()
	require.NoError(t, members.Delete(ctx, victim, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}))
	require.NoError(t, tn.WaitAvailable(ctx, 3))
	after, err := tn.MemberNames(ctx)
	require.NoError(t, err)
	require.NotContains(t, after, victim)
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}
