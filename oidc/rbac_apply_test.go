package oidc_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/cozystack/tenantkit/oidc"
	"github.com/cozystack/tenantkit/ref"
	"github.com/cozystack/tenantkit/tenant"
)

// TestRBAC_ExecuteIsSafeToRerun executes plans against a fake clientset in
// the states an interrupted Execute leaves behind.
func TestRBAC_ExecuteIsSafeToRerun(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewClientset()
	r, err := oidc.NewRBAC(acme, oidc.RBACConfig{Clientset: cs})
	require.NoError(t, err)
	users := []tenant.OIDCUser{{Email: "alice@example.org", Role: tenant.RoleAdmin}, {Email: "bob@example.org", Role: tenant.RoleView}}
	plan, err := r.Plan(ctx, users)
	require.NoError(t, err)
	require.NoError(t, r.Execute(ctx, plan))
	require.NoError(t, r.Execute(ctx, plan), "creating what exists updates it")

	// Alice becomes a viewer: the binding is replaced (roleRef is immutable).
	users[0].Role = tenant.RoleView
	plan, err = r.Sync(ctx, users)
	require.NoError(t, err)
	require.Equal(t, oidc.ActionReplace, plan.Changes[0].Action)
	crb, err := cs.RbacV1().ClusterRoleBindings().Get(ctx, oidc.BindingName(acme.Release(), "alice@example.org"), metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, "view", crb.RoleRef.Name)
	require.NoError(t, r.Execute(ctx, plan), "replacing again is harmless")

	// Everyone leaves; deleting twice is harmless too.
	plan, err = r.Sync(ctx, nil)
	require.NoError(t, err)
	require.Len(t, plan.Changes, 2)
	require.NoError(t, r.Execute(ctx, plan))
	list, err := cs.RbacV1().ClusterRoleBindings().List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.Empty(t, list.Items)

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	plan, err = r.Plan(ctx, users)
	require.NoError(t, err)
	require.ErrorIs(t, r.Execute(cancelled, plan), context.Canceled)

	stage, err := oidc.NewRBAC(ref.Cluster{Namespace: "tenant-acme", Name: "stage"}, oidc.RBACConfig{Clientset: cs})
	require.NoError(t, err)
	other, err := stage.Plan(ctx, users)
	require.NoError(t, err)
	require.ErrorIs(t, r.Execute(ctx, other), oidc.ErrInvalidConfig, "a plan runs only on its own cluster")
	_, err = oidc.NewRBAC(acme, oidc.RBACConfig{})
	require.ErrorIs(t, err, oidc.ErrInvalidConfig)
}
