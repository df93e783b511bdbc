package cozystack_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/cozystack/tenantkit/cozystack"
	"github.com/cozystack/tenantkit/cozystack/cozystacktest"
	"github.com/cozystack/tenantkit/localenv"
	"github.com/cozystack/tenantkit/ref"
	"github.com/cozystack/tenantkit/tenant"
)

// TestCluster_handle plays Cozystack's part by hand: a tenant with a
// Kubernetes application, then (late) a second real kube-apiserver as the
// tenant cluster, published as Kamaji does. The handle waits for it and
// hands out a client for it.
func TestCluster_handle(t *testing.T) {
	env := testEnv(t)
	ctx := t.Context()
	p := cozystacktest.NewPlatformT(t, env.RESTConfig(), cozystacktest.PlatformConfig{})
	ns, err := p.CreateTenant(ctx, tenant.NewTenant(ref.RootNamespace, "handle", tenant.TenantSpec{Etcd: true}))
	require.NoError(t, err)
	_, err = p.Client().ApplyKubernetes(ctx, tenant.NewKubernetes(ref.Cluster{Namespace: ns, Name: "prod"}, tenant.KubernetesSpec{}))
	require.NoError(t, err)

	c := ref.Cluster{Namespace: ns, Name: "prod"}
	cl, err := cozystack.NewCluster(env.RESTConfig(), c, cozystack.Config{PollInterval: 50 * time.Millisecond})
	require.NoError(t, err)

	t.Run("names and services", func(t *testing.T) {
		host, err := cl.Host(ctx)
		require.NoError(t, err)
		require.Equal(t, "kubernetes-prod.handle.example.org", host)
		etcd, err := cl.EtcdNamespace(ctx)
		require.NoError(t, err)
		require.Equal(t, ns, etcd)
		s3, err := cl.SeaweedFSNamespace(ctx)
		require.NoError(t, err)
		require.Equal(t, ref.RootNamespace, s3)
	})

	t.Run("not ready until Kamaji writes the Secret", func(t *testing.T) {
		_, err := cl.Kubeconfig(ctx, ref.AdminConf)
		require.ErrorIs(t, err, cozystack.ErrKubeconfigNotReady)
		short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancel()
		_, err = cl.WaitKubeconfig(short, ref.SuperAdminSvc)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		_, err = cl.Kubeconfig(ctx, "kubeconfig")
		require.ErrorIs(t, err, cozystack.ErrInvalidConfig)
	})

	t.Run("waits for the kubeconfig and reaches the tenant cluster", func(t *testing.T) {
		tenantAPI, err := env.StartAPIServer(ctx, localenv.APIServerConfig{Name: "handle-prod"})
		require.NoError(t, err)
		published := make(chan error, 1)
		go func() {
			time.Sleep(300 * time.Millisecond)
			published <- p.PublishKubeconfig(context.Background(), c, tenantAPI.RESTConfig())
		}()
		data, err := cl.WaitKubeconfig(ctx, ref.AdminConf)
		require.NoError(t, err)
		require.NoError(t, <-published)
		require.Contains(t, string(data), tenantAPI.URL)

		cs, err := cl.Clientset(ctx)
		require.NoError(t, err)
		v, err := cs.Discovery().ServerVersion()
		require.NoError(t, err)
		require.Equal(t, "v1.37.2", v.GitVersion)
		_, err = cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "inside-tenant"}}, metav1.CreateOptions{})
		require.NoError(t, err)
		mgmt := kubernetes.NewForConfigOrDie(env.RESTConfig())
		_, err = mgmt.CoreV1().Namespaces().Get(ctx, "inside-tenant", metav1.GetOptions{})
		require.True(t, apierrors.IsNotFound(err), "the handle's client reaches the tenant cluster, not the management cluster")

		for _, variant := range ref.KubeconfigVariants() {
			rc, err := cl.RESTConfig(ctx, variant)
			require.NoError(t, err)
			require.Equal(t, tenantAPI.URL, rc.Host)
		}
	})

	t.Run("a malformed kubeconfig is an error, not a wait", func(t *testing.T) {
		bad := ref.Cluster{Namespace: ns, Name: "broken"}
		mgmt := kubernetes.NewForConfigOrDie(env.RESTConfig())
		_, err := mgmt.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: bad.AdminKubeconfigSecret()},
			Data:       map[string][]byte{"admin.conf": []byte("clusters: [not a kubeconfig")},
		}, metav1.CreateOptions{})
		require.NoError(t, err)
		bcl, err := p.Client().Cluster(bad)
		require.NoError(t, err)
		_, err = bcl.WaitKubeconfig(ctx, ref.AdminConf)
		require.ErrorIs(t, err, cozystack.ErrMalformedKubeconfig)
		_, err = bcl.Kubeconfig(ctx, ref.SuperAdminSvc)
		require.ErrorIs(t, err, cozystack.ErrKubeconfigNotReady, "a missing key is not ready yet")
	})

	t.Run("a tenant without etcd up its hierarchy", func(t *testing.T) {
		mgmt := kubernetes.NewForConfigOrDie(env.RESTConfig())
		_, err := mgmt.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tenant-noetcd"}}, metav1.CreateOptions{})
		require.NoError(t, err)
		ncl, err := p.Client().Cluster(ref.Cluster{Namespace: "tenant-noetcd", Name: "x"})
		require.NoError(t, err)
		_, err = ncl.EtcdNamespace(ctx)
		require.ErrorIs(t, err, cozystack.ErrNoEtcd)
		_, err = ncl.SeaweedFSNamespace(ctx)
		require.ErrorIs(t, err, cozystack.ErrNoSeaweedFS)
	})

	_, err = p.Client().Cluster(ref.Cluster{Namespace: "kube-system", Name: "x"})
	require.ErrorIs(t, err, ref.ErrInvalidName)
}
