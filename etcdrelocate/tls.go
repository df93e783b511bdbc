package etcdrelocate

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// tlsFromSecrets builds the client TLS configuration from the namespace's
// cert-manager Secrets: the client certificate of etcd-client-tls and the CA
// of etcd-ca-tls (ca.crt, else tls.crt).
func tlsFromSecrets(ctx context.Context, kube kubernetes.Interface, namespace string) (*tls.Config, error) {
	client, err := kube.CoreV1().Secrets(namespace).Get(ctx, clientTLSSecret, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("etcd client TLS: %w", err)
	}
	ca, err := kube.CoreV1().Secrets(namespace).Get(ctx, caTLSSecret, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("etcd client TLS: %w", err)
	}
	cert, err := tls.X509KeyPair(client.Data["tls.crt"], client.Data["tls.key"])
	if err != nil {
		return nil, fmt.Errorf("etcd client TLS: secret %s: %w", clientTLSSecret, err)
	}
	caPEM := ca.Data["ca.crt"]
	if len(caPEM) == 0 {
		caPEM = ca.Data["tls.crt"]
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("etcd client TLS: secret %s holds no CA certificate", caTLSSecret)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool, MinVersion: tls.VersionTLS12}, nil
}

// parseCertificate reads the first certificate of a PEM bundle.
func parseCertificate(secret string, data []byte) (Certificate, error) {
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "CERTIFICATE" {
		return Certificate{}, fmt.Errorf("secret %s: tls.crt holds no certificate", secret)
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return Certificate{}, fmt.Errorf("secret %s: %w", secret, err)
	}
	out := Certificate{Secret: secret, DNSNames: c.DNSNames, NotAfter: c.NotAfter}
	for _, u := range c.ExtKeyUsage {
		switch u {
		case x509.ExtKeyUsageServerAuth:
			out.ServerAuth = true
		case x509.ExtKeyUsageClientAuth:
			out.ClientAuth = true
		}
	}
	return out, nil
}
