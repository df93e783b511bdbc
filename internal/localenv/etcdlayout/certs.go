package etcdlayout

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"time"
)

// certLifetime and caLifetime follow cert-manager's defaults for the
// chart's certificates (CA 87600h as the chart sets; leaves 90 days).
const (
	caLifetime   = 87600 * time.Hour
	certLifetime = 90 * 24 * time.Hour
)

// issuer is a CA that signs the layout's certificates.
type issuer struct {
	cert    *x509.Certificate
	key     *ecdsa.PrivateKey
	certPEM []byte
	keyPEM  []byte
}

// keyPair is an issued certificate in cert-manager's Secret layout.
type keyPair struct {
	certPEM, keyPEM, caPEM []byte
}

// secretData returns the Secret data keys cert-manager writes.
func (kp keyPair) secretData() map[string][]byte {
	return map[string][]byte{"tls.crt": kp.certPEM, "tls.key": kp.keyPEM, "ca.crt": kp.caPEM}
}

// newIssuer creates a self-signed CA like the chart's etcd-ca and
// etcd-peer-ca Certificates (which use RSA 4096; ECDSA P-256 here, to keep
// tests fast).
func newIssuer(cn, org, unit string) (*issuer, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: cn, Organization: []string{org}, OrganizationalUnit: []string{unit}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(caLifetime),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("sign %s: %w", cn, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	keyPEM, err := encodeKey(key)
	if err != nil {
		return nil, err
	}
	return &issuer{cert: cert, key: key, certPEM: encodeCert(der), keyPEM: keyPEM}, nil
}

// self returns the CA's own Secret data (a self-signed CA's ca.crt is
// itself, as cert-manager writes it).
func (is *issuer) self() keyPair { return keyPair{is.certPEM, is.keyPEM, is.certPEM} }

// issue signs a leaf certificate.
func (is *issuer) issue(cn, org, unit string, dnsNames []string, ips []net.IP, usages ...x509.ExtKeyUsage) (keyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return keyPair{}, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: cn, Organization: []string{org}, OrganizationalUnit: []string{unit}},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(certLifetime),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  usages,
		DNSNames:     dnsNames,
		IPAddresses:  ips,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, is.cert, key.Public(), is.key)
	if err != nil {
		return keyPair{}, fmt.Errorf("sign %s: %w", cn, err)
	}
	keyPEM, err := encodeKey(key)
	if err != nil {
		return keyPair{}, err
	}
	return keyPair{certPEM: encodeCert(der), keyPEM: keyPEM, caPEM: is.certPEM}, nil
}

func encodeCert(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func encodeKey(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(fmt.Sprintf("etcdlayout: read random serial: %v", err)) // crypto/rand does not fail
	}
	return n
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
