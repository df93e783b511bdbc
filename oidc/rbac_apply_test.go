package oidc_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/cozystack/tenantkit/oidc"
)

// TestRBACApplyIsSafeToRerun applies plans against a fake clientset in the
// states an interrupted Apply leaves behind.
func TestRBACApplyIsSafeToRerun(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewClientset()
	users := []oidc.User{{Email: "alice@example.org", Role: oidc.RoleAdmin}, {Email: "bob@example.org", Role: oidc.RoleView}}
	plan, err := oidc.PlanRBAC(acme, users, nil)
	require.NoError(t, err)
	require.NoError(t, plan.Apply(ctx, cs))
	require.NoError(t, plan.Apply(ctx, cs), "creating what exists updates it")

	// Alice becomes a viewer: the binding is replaced (roleRef is immutable).
	users[0].Role = oidc.RoleView
	plan, err = oidc.SyncRBAC(ctx, cs, acme, users)
	require.NoError(t, err)
	require.Equal(t, oidc.ActionReplace, plan.Changes[0].Action)
	crb, err := cs.RbacV1().ClusterRoleBindings().Get(ctx, oidc.BindingName(acme.Release(), "alice@example.org"), metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, "view", crb.RoleRef.Name)
	require.NoError(t, plan.Apply(ctx, cs), "replacing again is harmless")

	// Everyone leaves; deleting twice is harmless too.
	plan, err = oidc.SyncRBAC(ctx, cs, acme, nil)
	require.NoError(t, err)
	require.Len(t, plan.Changes, 2)
	require.NoError(t, plan.Apply(ctx, cs))
	list, err := cs.RbacV1().ClusterRoleBindings().List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.Empty(t, list.Items)

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	plan, err = oidc.PlanRBAC(acme, users, nil)
	require.NoError(t, err)
	require.ErrorIs(t, plan.Apply(cancelled, cs), context.Canceled)
}
