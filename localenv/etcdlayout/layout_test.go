package etcdlayout_test

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"

	corev1 "k8s.io/api/core/v1"

	"github.com/cozystack/tenantkit/localenv/etcdlayout"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestNewV1alpha1_golden(t *testing.T) {
	l, err := etcdlayout.NewV1alpha1(etcdlayout.Config{Tenant: "demo", StorageClass: "local"})
	require.NoError(t, err)
	var out bytes.Buffer
	objs := append([]runtime.Object{l.EtcdCluster()}, l.Objects()...)
	for _, obj := range objs {
		obj = obj.DeepCopyObject()
		if s, ok := obj.(*corev1.Secret); ok {
			// Keys are fresh on every run; the golden file shows which keys
			// each Secret has.
			for k := range s.Data {
				s.Data[k] = []byte("<" + k + ">")
			}
		}
		if gvks, _, err := scheme.Scheme.ObjectKinds(obj); err == nil {
			obj.GetObjectKind().SetGroupVersionKind(gvks[0])
		}
		b, err := yaml.Marshal(obj)
		require.NoError(t, err)
		out.WriteString("---\n")
		out.Write(b)
	}
	golden := filepath.Join("testdata", "v1alpha1.golden")
	if *update {
		require.NoError(t, os.WriteFile(golden, out.Bytes(), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	require.Equal(t, string(want), out.String())
}

func TestNewV1alpha2_golden(t *testing.T) {
	l, err := etcdlayout.NewV1alpha2(etcdlayout.Config{Tenant: "demo", StorageClass: "local"})
	require.NoError(t, err)
	b, err := yaml.Marshal(l.Cluster.Object)
	require.NoError(t, err)
	golden := filepath.Join("testdata", "v1alpha2.golden")
	if *update {
		require.NoError(t, os.WriteFile(golden, b, 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	require.Equal(t, string(want), string(b))
	block, _ := pem.Decode(l.Secrets[2].Data["tls.crt"])
	require.NotNil(t, block)
	cert, err := x509.ParseCertificate(block.Bytes)
	require.NoError(t, err)
	require.Equal(t, []string{"etcd", "etcd.tenant-demo.svc", "*.etcd.tenant-demo.svc", "*.etcd-headless.tenant-demo.svc", "localhost"}, cert.DNSNames)
	require.NoError(t, cert.VerifyHostname(etcdlayout.MemberHost("tenant-demo", "etcd-7xq2k")))
}

func TestNewV1alpha1_certificates(t *testing.T) {
	l, err := etcdlayout.NewV1alpha1(etcdlayout.Config{Namespace: "tenant-a-b", Replicas: 5})
	require.NoError(t, err)
	secrets := map[string]*corev1.Secret{}
	for _, s := range l.Secrets {
		secrets[s.Name] = s
	}
	require.Len(t, secrets, 5)
	leaf := func(name string) *x509.Certificate {
		block, _ := pem.Decode(secrets[name].Data["tls.crt"])
		require.NotNil(t, block, name)
		c, err := x509.ParseCertificate(block.Bytes)
		require.NoError(t, err)
		return c
	}
	for _, name := range []string{etcdlayout.SecretServer, etcdlayout.SecretPeer} {
		c := leaf(name)
		require.Contains(t, c.DNSNames, "etcd-4.etcd-headless.tenant-a-b.svc", name)
		require.Contains(t, c.DNSNames, "etcd.tenant-a-b.svc", name)
		require.NotContains(t, c.DNSNames, "etcd-5.etcd-headless.tenant-a-b.svc", "SANs are enumerated per replica")
		require.ElementsMatch(t, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}, c.ExtKeyUsage)
		require.Equal(t, "127.0.0.1", c.IPAddresses[0].String())
	}
	client := leaf(etcdlayout.SecretClient)
	require.Equal(t, "root", client.Subject.CommonName)
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(secrets[etcdlayout.SecretCA].Data["ca.crt"]))
	_, err = client.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	require.NoError(t, err, "client certificate is signed by etcd-ca")
	peerPool := x509.NewCertPool()
	require.True(t, peerPool.AppendCertsFromPEM(secrets[etcdlayout.SecretPeerCA].Data["ca.crt"]))
	_, err = leaf(etcdlayout.SecretPeer).Verify(x509.VerifyOptions{Roots: peerPool, DNSName: "etcd-0.etcd-headless.tenant-a-b.svc"})
	require.NoError(t, err, "peer certificate is signed by etcd-peer-ca")

	tlsCfg, err := etcdlayout.ClientTLSConfig(secrets[etcdlayout.SecretClient].Data["tls.crt"], secrets[etcdlayout.SecretClient].Data["tls.key"], secrets[etcdlayout.SecretCA].Data["ca.crt"])
	require.NoError(t, err)
	require.Len(t, tlsCfg.Certificates, 1)
}

func TestNewV1alpha1_invalid(t *testing.T) {
	for name, cfg := range map[string]etcdlayout.Config{
		"no tenant":         {},
		"negative replicas": {Tenant: "x", Replicas: -1},
	} {
		_, err := etcdlayout.NewV1alpha1(cfg)
		require.ErrorIs(t, err, etcdlayout.ErrInvalidConfig, name)
	}
}

func TestClientTLSConfig_badSecrets(t *testing.T) {
	_, err := etcdlayout.ClientTLSConfig([]byte("x"), []byte("y"), nil)
	require.ErrorIs(t, err, etcdlayout.ErrBadSecret)
}
