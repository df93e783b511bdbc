package localenv_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/cozystack/tenantkit/localenv"
)

// TestAddUser_refused: AddUser needs a name and an environment with an
// apiserver of its own.
func TestAddUser_refused(t *testing.T) {
	for name, tt := range map[string]struct {
		user localenv.User
		want error
	}{
		"no name":      {localenv.User{Groups: []string{"team-a"}}, localenv.ErrInvalidConfig},
		"no apiserver": {localenv.User{Name: "alice"}, localenv.ErrUnsupported},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := (&localenv.Env{}).AddUser(tt.user)
			require.ErrorIs(t, err, tt.want)
		})
	}
}

// TestAddUser: against the real apiserver, a user without RBAC is
// Forbidden; once a RoleBinding names one of its groups it may do what the
// Role allows, and still nothing else.
func TestAddUser(t *testing.T) {
	env := localenv.StartT(t, localenv.Config{})
	ctx := t.Context()
	admin := kubernetes.NewForConfigOrDie(env.RESTConfig())

	alone, err := env.AddUser(localenv.User{Name: "bob"})
	require.NoError(t, err)
	_, err = kubernetes.NewForConfigOrDie(alone).CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
	require.True(t, apierrors.IsForbidden(err), "bob has no RBAC binding: %v", err)

	rc, err := env.AddUser(localenv.User{Name: "alice", Groups: []string{"team-a"}})
	require.NoError(t, err)
	alice := kubernetes.NewForConfigOrDie(rc)
	_, err = alice.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
	require.True(t, apierrors.IsForbidden(err), "before the binding: %v", err)

	_, err = admin.RbacV1().Roles("default").Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "configmap-reader"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list"}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = admin.RbacV1().RoleBindings("default").Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "team-a-reads"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "configmap-reader"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "team-a"}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)

	require.Eventually(t, func() bool {
		_, err := alice.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
		return err == nil
	}, 10*time.Second, 100*time.Millisecond, "team-a is bound to configmap-reader")
	_, err = alice.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{})
	require.True(t, apierrors.IsForbidden(err), "the Role grants no create: %v", err)
	_, err = kubernetes.NewForConfigOrDie(alone).CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
	require.True(t, apierrors.IsForbidden(err), "bob is not in team-a: %v", err)
}
