package etcdlayout

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func testCluster(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	l, err := NewV1alpha2(Config{Tenant: "t"})
	require.NoError(t, err)
	return l.Cluster.DeepCopy()
}

func TestSpecEqualsObserved(t *testing.T) {
	o := &Operator{cfg: OperatorConfig{ProgressDeadline: time.Minute}}
	c := testCluster(t)
	require.False(t, specEqualsObserved(c), "nothing latched yet")
	o.latch(c, reasonInitialSnapshot, "")
	require.True(t, specEqualsObserved(c))
	require.Equal(t, 3, observedReplicas(c))
	require.NoError(t, unstructured.SetNestedField(c.Object, map[string]any{"nodeAffinity": map[string]any{}}, "spec", "affinity"))
	require.False(t, specEqualsObserved(c), "a new affinity is not observed until latched")
	require.Nil(t, observed(c)["affinity"])
	o.latch(c, reasonSpecChanged, "")
	require.True(t, specEqualsObserved(c))
	cond := conditions(c)
	require.Len(t, cond, 1)
	require.Equal(t, condProgressing, cond[0].Type)
	require.Equal(t, reasonSpecChanged, cond[0].Reason)
}

func TestDeadline(t *testing.T) {
	o := &Operator{cfg: OperatorConfig{ProgressDeadline: time.Minute}}
	c := testCluster(t)
	now := time.Now()
	require.False(t, deadlineExpired(c, now))
	o.latch(c, reasonInitialSnapshot, "")
	require.False(t, deadlineExpired(c, now))
	require.True(t, deadlineExpired(c, now.Add(2*time.Minute)))
	require.NoError(t, unstructured.SetNestedField(c.Object, int64(5), "spec", "progressDeadlineSeconds"))
	d, err := time.Parse(time.RFC3339, o.progressDeadline(c, now))
	require.NoError(t, err)
	require.WithinDuration(t, now.Add(5*time.Second), d, time.Second)
}

func TestComplete(t *testing.T) {
	o := &Operator{cfg: OperatorConfig{ProgressDeadline: time.Minute}}
	c := testCluster(t)
	require.False(t, complete(c, 3, 3), "nothing observed")
	o.latch(c, reasonInitialSnapshot, "")
	require.False(t, complete(c, 3, 3), "no cluster ID")
	require.NoError(t, unstructured.SetNestedField(c.Object, "abc", "status", "clusterID"))
	for _, tc := range []struct {
		running, ready int
		want           bool
	}{{3, 3, true}, {3, 2, false}, {2, 2, false}, {4, 4, false}} {
		require.Equal(t, tc.want, complete(c, tc.running, tc.ready), "%+v", tc)
	}
}

func TestPDBMinAvailable(t *testing.T) {
	for _, tc := range []struct{ voters, target, want int }{
		{0, 0, 0}, {3, 3, 2}, {2, 3, 2}, {4, 3, 3}, {1, 1, 1}, {5, 3, 3}, {3, 5, 3},
	} {
		require.Equal(t, tc.want, pdbMinAvailable(tc.voters, tc.target), "%+v", tc)
	}
}

func TestNewest(t *testing.T) {
	at := func(name string, sec int64, deleting bool) member {
		u := &unstructured.Unstructured{Object: map[string]any{}}
		u.SetName(name)
		u.SetCreationTimestamp(metav1.Unix(sec, 0))
		return member{obj: u, name: name, deleting: deleting}
	}
	ms := []member{at("etcd-a", 1, false), at("etcd-z", 3, true), at("etcd-c", 2, false), at("etcd-b", 2, false)}
	require.Equal(t, "etcd-c", newest(ms).GetName(), "newest, ties by greater name, deleting members skipped")
}

func TestSetCondition(t *testing.T) {
	c := testCluster(t)
	require.True(t, setCondition(c, condAvailable, true, reasonQuorumHealthy, "All members are ready"))
	require.False(t, setCondition(c, condAvailable, true, reasonQuorumHealthy, "All members are ready"))
	require.True(t, setCondition(c, condAvailable, false, reasonDeadlineExceeded, "x"))
	require.Len(t, conditions(c), 1)
}

func TestGuardPolicy(t *testing.T) {
	vap, binding, err := guardPolicy(GuardConfig{AdditionalAllowedUsers: []string{"tenantkit"}})
	require.NoError(t, err)
	require.Equal(t, guardName, binding.Spec.PolicyName)
	require.Contains(t, vap.Spec.Validations[0].Expression, `"`+OperatorUser+`"`)
	require.Contains(t, vap.Spec.Validations[0].Expression, `"tenantkit"]`)
	require.Contains(t, vap.Spec.Validations[0].Expression, `oldObject.metadata.annotations["`+AllowDeletionAnnotation+`"] == "true"`)
}
