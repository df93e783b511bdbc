package pki_test

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cozystack/tenantkit/localenv/pki"
)

func TestIssue_chainsToCA(t *testing.T) {
	ca, err := pki.NewCA("test-ca")
	require.NoError(t, err)
	tests := []struct {
		name  string
		spec  pki.Spec
		usage x509.ExtKeyUsage
	}{
		{"server", pki.Spec{CommonName: "srv", DNSNames: []string{"localhost"}, IPs: []net.IP{net.IPv4(127, 0, 0, 1)}}, x509.ExtKeyUsageServerAuth},
		{"client", pki.Spec{CommonName: "admin", Organization: []string{"system:masters"}, Usage: pki.Client}, x509.ExtKeyUsageClientAuth},
		{"peer", pki.Spec{CommonName: "etcd-0", IPs: []net.IP{net.IPv4(127, 0, 0, 1)}, Usage: pki.ServerAndClient}, x509.ExtKeyUsageClientAuth},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kp, err := ca.Issue(tt.spec)
			require.NoError(t, err)
			cert, err := kp.TLSCertificate()
			require.NoError(t, err)
			leaf, err := x509.ParseCertificate(cert.Certificate[0])
			require.NoError(t, err)
			_, err = leaf.Verify(x509.VerifyOptions{Roots: ca.Pool(), KeyUsages: []x509.ExtKeyUsage{tt.usage}})
			require.NoError(t, err)
			require.Equal(t, tt.spec.CommonName, leaf.Subject.CommonName)
			require.Equal(t, tt.spec.Organization, leaf.Subject.Organization)
		})
	}
}

func TestWriteFiles(t *testing.T) {
	ca, err := pki.NewCA("test-ca")
	require.NoError(t, err)
	kp, err := ca.Issue(pki.Spec{CommonName: "srv"})
	require.NoError(t, err)
	dir := t.TempDir()
	certFile, keyFile, err := kp.WriteFiles(dir, "srv")
	require.NoError(t, err)
	_, err = tls.LoadX509KeyPair(certFile, keyFile)
	require.NoError(t, err)
}

func TestNewCAFor_subjectLifetimeAndKey(t *testing.T) {
	spec := pki.Spec{CommonName: "etcd-ca", Organization: []string{"tenant-a"}, OrganizationalUnit: []string{"etcd"}, Lifetime: 87600 * time.Hour}
	ca, err := pki.NewCAFor(spec)
	require.NoError(t, err)
	require.True(t, ca.Cert.IsCA)
	require.Equal(t, spec.OrganizationalUnit, ca.Cert.Subject.OrganizationalUnit)
	require.WithinDuration(t, time.Now().Add(spec.Lifetime), ca.Cert.NotAfter, time.Minute)
	// The CA's key is the one that signs: a pair of CertPEM and KeyPEM loads.
	_, err = tls.X509KeyPair(ca.CertPEM, ca.KeyPEM)
	require.NoError(t, err)

	leaf, err := ca.Issue(pki.Spec{CommonName: "root", Usage: pki.Client, Lifetime: 90 * 24 * time.Hour})
	require.NoError(t, err)
	cert, err := leaf.TLSCertificate()
	require.NoError(t, err)
	parsed, err := x509.ParseCertificate(cert.Certificate[0])
	require.NoError(t, err)
	require.WithinDuration(t, time.Now().Add(90*24*time.Hour), parsed.NotAfter, time.Minute)

	plain, err := ca.Issue(pki.Spec{CommonName: "default"})
	require.NoError(t, err)
	cert, err = plain.TLSCertificate()
	require.NoError(t, err)
	parsed, err = x509.ParseCertificate(cert.Certificate[0])
	require.NoError(t, err)
	require.WithinDuration(t, time.Now().Add(pki.Lifetime), parsed.NotAfter, time.Minute)
}
