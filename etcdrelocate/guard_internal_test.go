package etcdrelocate

import (
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
)

// TestDeleteEtcdMemberGuarded models the guard's rule (deny unless the
// member is annotated) in a reactor; the real policy on a real apiserver is
// exercised in localenv/etcdlayout's TestV1alpha2_deletionGuard.
func TestDeleteEtcdMemberGuarded(t *testing.T) {
	for _, tc := range []struct {
		name               string
		guard, wantGuarded bool
	}{{"no guard", false, false}, {"guard", true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			m := &unstructured.Unstructured{Object: map[string]any{"apiVersion": gvrEtcdMember.GroupVersion().String(), "kind": "EtcdMember"}}
			m.SetName("etcd-abc")
			m.SetNamespace("ns")
			m.SetUID("uid-1")
			d := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
				map[schema.GroupVersionResource]string{gvrEtcdMember: "EtcdMemberList"}, m)
			var dryRuns, deletes int
			d.PrependReactor("delete", "etcdmembers", func(a k8stesting.Action) (bool, runtime.Object, error) {
				opts := a.(k8stesting.DeleteActionImpl).DeleteOptions
				require.NotNil(t, opts.Preconditions)
				require.Equal(t, "uid-1", string(*opts.Preconditions.UID))
				cur, err := d.Tracker().Get(gvrEtcdMember, "ns", "etcd-abc")
				require.NoError(t, err)
				ann := cur.(*unstructured.Unstructured).GetAnnotations()[AnnotationAllowDeletion]
				if len(opts.DryRun) > 0 {
					dryRuns++
				} else {
					deletes++
				}
				if tc.guard && ann != "true" {
					return true, nil, apierrors.NewForbidden(gvrEtcdMember.GroupResource(), "etcd-abc", nil)
				}
				return len(opts.DryRun) > 0, nil, nil
			})
			guarded, err := deleteEtcdMemberGuarded(t.Context(), d.Resource(gvrEtcdMember).Namespace("ns"), "ns", "etcd-abc")
			require.NoError(t, err)
			require.Equal(t, tc.wantGuarded, guarded)
			require.Equal(t, 1, dryRuns)
			require.Equal(t, 1, deletes)
			_, err = d.Resource(gvrEtcdMember).Namespace("ns").Get(t.Context(), "etcd-abc", metav1.GetOptions{})
			require.True(t, apierrors.IsNotFound(err))
		})
	}
}
