package cozystacktest_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/cozystack/tenantkit/cozystack/cozystacktest"
	"github.com/cozystack/tenantkit/tenant"
)

func TestKubeconfig(t *testing.T) {
	rc := &rest.Config{Host: "https://127.0.0.1:6443", TLSClientConfig: rest.TLSClientConfig{
		CAData: []byte("ca"), CertData: []byte("cert"), KeyData: []byte("key")}}
	data, err := cozystacktest.Kubeconfig("kubernetes-prod", rc)
	require.NoError(t, err)
	cfg, err := clientcmd.Load(data)
	require.NoError(t, err)
	require.Equal(t, "kubernetes-prod", cfg.CurrentContext)
	back, err := clientcmd.RESTConfigFromKubeConfig(data)
	require.NoError(t, err)
	require.Equal(t, rc.Host, back.Host)
	require.Equal(t, rc.CAData, back.CAData)
	require.Equal(t, rc.CertData, back.CertData)
	require.Equal(t, rc.KeyData, back.KeyData)
}

func TestCRDs(t *testing.T) {
	crds := cozystacktest.CRDs()
	require.Len(t, crds, 2)
	require.Equal(t, "kuberneteses."+tenant.Group, crds[0].Name)
	require.Equal(t, tenant.KubernetesKind, crds[0].Spec.Names.Kind)
	require.Equal(t, tenant.KubernetesResource.Resource, crds[0].Spec.Names.Plural)
	require.Equal(t, tenant.TenantResource.Resource, crds[1].Spec.Names.Plural)
	require.Equal(t, tenant.GroupVersion.Version, crds[0].Spec.Versions[0].Name)
}
