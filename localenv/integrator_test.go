package localenv_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/cozystack/tenantkit/localenv"
)

// TestIntegratorFlow is the test README's "Testing your own code against
// tenantkit's local environment" shows: what a program importing tenantkit
// writes for its own integration tests. The admin writes a ConfigMap; a
// user (Env.AddUser) without an RBAC binding may not read it.
func TestIntegratorFlow(t *testing.T) {
	env := localenv.StartT(t, localenv.Config{EtcdMembers: 1})
	ctx := t.Context()

	admin := kubernetes.NewForConfigOrDie(env.RESTConfig())
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}, Data: map[string]string{"mode": "strict"}}
	_, err := admin.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{})
	require.NoError(t, err)
	got, err := admin.CoreV1().ConfigMaps("default").Get(ctx, "settings", metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, "strict", got.Data["mode"])

	rc, err := env.AddUser(localenv.User{Name: "alice"})
	require.NoError(t, err)
	alice := kubernetes.NewForConfigOrDie(rc)
	_, err = alice.CoreV1().ConfigMaps("default").Get(ctx, "settings", metav1.GetOptions{})
	require.True(t, apierrors.IsForbidden(err), "alice has no RBAC binding: %v", err)
}
