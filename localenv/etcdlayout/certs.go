package etcdlayout

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"time"

	"github.com/cozystack/tenantkit/localenv/pki"
)

// certLifetime and caLifetime follow cert-manager's defaults for the
// chart's certificates (CA 87600h as the chart sets; leaves 90 days).
const (
	caLifetime   = 87600 * time.Hour
	certLifetime = 90 * 24 * time.Hour
)

// tlsSecretData returns the Secret data keys cert-manager writes.
func tlsSecretData(certPEM, keyPEM, caPEM []byte) map[string][]byte {
	return map[string][]byte{"tls.crt": certPEM, "tls.key": keyPEM, "ca.crt": caPEM}
}

// newIssuer creates a self-signed CA like the chart's etcd-ca and
// etcd-peer-ca Certificates (which use RSA 4096; ECDSA P-256 here, to keep
// tests fast).
func newIssuer(cn, ns string) (*pki.CA, error) {
	return pki.NewCAFor(pki.Spec{CommonName: cn, Organization: []string{ns},
		OrganizationalUnit: []string{clusterName}, Lifetime: caLifetime})
}

// issue signs a leaf certificate of the chart's layout with ca and returns
// its Secret data.
func issue(ca *pki.CA, cn, ns string, dnsNames []string, ips []net.IP, usage pki.Usage) (map[string][]byte, error) {
	kp, err := ca.Issue(pki.Spec{CommonName: cn, Organization: []string{ns}, OrganizationalUnit: []string{clusterName},
		DNSNames: dnsNames, IPs: ips, Usage: usage, Lifetime: certLifetime})
	if err != nil {
		return nil, err
	}
	return tlsSecretData(kp.CertPEM, kp.KeyPEM, ca.CertPEM), nil
}

// ClientTLSConfig builds a client TLS configuration from the contents of the
// etcd-client-tls Secret (certificate and key, CN root) and the etcd-ca-tls
// Secret's ca.crt, the way Kamaji and kubectl-etcd connect to a tenant etcd.
func ClientTLSConfig(clientCert, clientKey, caCert []byte) (*tls.Config, error) {
	cert, err := tls.X509KeyPair(clientCert, clientKey)
	if err != nil {
		return nil, fmt.Errorf("%w: client certificate: %w", ErrBadSecret, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caCert) {
		return nil, fmt.Errorf("%w: no CA certificate in ca.crt", ErrBadSecret)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool, MinVersion: tls.VersionTLS12}, nil
}
