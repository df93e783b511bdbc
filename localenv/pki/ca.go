package pki

import (
	"crypto"
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
	"os"
	"path/filepath"
	"time"
)

// Lifetime is how long issued certificates stay valid.
const Lifetime = 24 * time.Hour

// Usage says what an issued certificate may be used for.
type Usage int

const (
	// Server certificates authenticate a listener.
	Server Usage = iota
	// Client certificates authenticate a caller.
	Client
	// ServerAndClient certificates do both, as etcd peer certificates must.
	ServerAndClient
)

// Spec describes a certificate to issue.
type Spec struct {
	// CommonName is the subject CN; kube-apiserver reads it as the user name
	// of a client certificate.
	CommonName string
	// Organization is the subject O; kube-apiserver reads it as the groups of
	// a client certificate (for example "system:masters").
	Organization []string
	// OrganizationalUnit is the subject OU.
	OrganizationalUnit []string
	// DNSNames and IPs are the subject alternative names of a server
	// certificate.
	DNSNames []string
	IPs      []net.IP
	// Usage selects the extended key usages. The zero value is Server.
	// NewCAFor ignores it.
	Usage Usage
	// Lifetime is how long the certificate stays valid. Zero means the
	// package's Lifetime.
	Lifetime time.Duration
}

func (s Spec) subject() pkix.Name {
	return pkix.Name{CommonName: s.CommonName, Organization: s.Organization, OrganizationalUnit: s.OrganizationalUnit}
}

func (s Spec) notAfter(now time.Time) time.Time {
	if s.Lifetime > 0 {
		return now.Add(s.Lifetime)
	}
	return now.Add(Lifetime)
}

// CA is a certificate authority that signs certificates for one environment.
type CA struct {
	// Cert is the CA certificate.
	Cert *x509.Certificate
	// CertPEM is Cert, PEM-encoded.
	CertPEM []byte
	// KeyPEM is the CA's private key, PEM-encoded (PKCS #8), for layouts
	// that store a CA with its key, as cert-manager's CA Secrets do.
	KeyPEM []byte
	key    crypto.Signer
}

// KeyPair is an issued certificate with its private key, both PEM-encoded.
type KeyPair struct {
	// CertPEM is the certificate, PEM-encoded.
	CertPEM []byte
	// KeyPEM is its private key, PEM-encoded.
	KeyPEM []byte
}

// NewCA creates a self-signed certificate authority named commonName.
func NewCA(commonName string) (*CA, error) {
	return NewCAFor(Spec{CommonName: commonName})
}

// NewCAFor creates a self-signed certificate authority with spec's subject
// and lifetime.
func NewCAFor(spec Spec) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate CA key: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               spec.subject(),
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              spec.notAfter(now),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("sign CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parse CA certificate: %w", err)
	}
	keyPEM, err := encodeKey(key)
	if err != nil {
		return nil, fmt.Errorf("marshal CA key: %w", err)
	}
	return &CA{Cert: cert, CertPEM: encodeCert(der), KeyPEM: keyPEM, key: key}, nil
}

// Issue signs a new certificate for spec with a fresh key.
func (ca *CA) Issue(spec Spec) (*KeyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate key for %s: %w", spec.CommonName, err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      spec.subject(),
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     spec.notAfter(now),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  spec.Usage.extKeyUsage(),
		DNSNames:     spec.DNSNames,
		IPAddresses:  spec.IPs,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, key.Public(), ca.key)
	if err != nil {
		return nil, fmt.Errorf("sign certificate for %s: %w", spec.CommonName, err)
	}
	keyPEM, err := encodeKey(key)
	if err != nil {
		return nil, fmt.Errorf("marshal key for %s: %w", spec.CommonName, err)
	}
	return &KeyPair{CertPEM: encodeCert(der), KeyPEM: keyPEM}, nil
}

// Pool returns a certificate pool holding only the CA certificate.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Cert)
	return p
}

// WriteCert writes the CA certificate to dir/name.crt and returns its path.
func (ca *CA) WriteCert(dir, name string) (string, error) {
	path := filepath.Join(dir, name+".crt")
	if err := os.WriteFile(path, ca.CertPEM, 0o644); err != nil {
		return "", fmt.Errorf("write CA certificate: %w", err)
	}
	return path, nil
}

// WriteFiles writes the pair to dir/name.crt and dir/name.key and returns
// both paths.
func (kp *KeyPair) WriteFiles(dir, name string) (certFile, keyFile string, err error) {
	certFile = filepath.Join(dir, name+".crt")
	keyFile = filepath.Join(dir, name+".key")
	if err := os.WriteFile(certFile, kp.CertPEM, 0o644); err != nil {
		return "", "", fmt.Errorf("write certificate %s: %w", name, err)
	}
	if err := os.WriteFile(keyFile, kp.KeyPEM, 0o600); err != nil {
		return "", "", fmt.Errorf("write key %s: %w", name, err)
	}
	return certFile, keyFile, nil
}

// TLSCertificate returns the pair as a tls.Certificate.
func (kp *KeyPair) TLSCertificate() (tls.Certificate, error) {
	return tls.X509KeyPair(kp.CertPEM, kp.KeyPEM)
}

func (u Usage) extKeyUsage() []x509.ExtKeyUsage {
	switch u {
	case Client:
		return []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	case ServerAndClient:
		return []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	default:
		return []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	}
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
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
	if err != nil {
		panic(fmt.Sprintf("pki: read random serial: %v", err)) // crypto/rand never fails on Linux
	}
	return n
}
