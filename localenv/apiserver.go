package localenv

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/rest"

	"github.com/cozystack/tenantkit/internal/process"
	"github.com/cozystack/tenantkit/internal/serverbin"
	"github.com/cozystack/tenantkit/localenv/pki"
)

// APIServerConfig configures one kube-apiserver.
type APIServerConfig struct {
	// Name names the apiserver: its directory, its etcd key prefix
	// (/tenantkit/<name>) and its component name. Default "kube-apiserver".
	// Names must be unique within an environment.
	Name string
	// Port is the secure port on 127.0.0.1. Zero picks a free port.
	Port int
	// ExtraArgs are appended to the generated flags; a flag given here
	// replaces the generated flag of the same name. For example
	// "--authentication-config=/path/config.yaml".
	ExtraArgs []string
	// ServiceAccountAdmission keeps the ServiceAccount admission plugin on.
	// Leave it off unless a controller manager creates service accounts.
	ServiceAccountAdmission bool
}

// APIServer is a running kube-apiserver.
type APIServer struct {
	// Name is the apiserver's name (see APIServerConfig.Name).
	Name string
	// URL is the https URL it serves on.
	URL string
	// Dir holds its certificates, kubeconfig and log.
	Dir string
	// CAPEM is the CA that signed its serving certificate and that it
	// trusts for client certificates.
	CAPEM []byte

	admin *pki.KeyPair
	proc  *process.Process
}

// RESTConfig returns a new rest.Config for the admin user (a client
// certificate in system:masters).
func (a *APIServer) RESTConfig() *rest.Config {
	return &rest.Config{
		Host: a.URL,
		TLSClientConfig: rest.TLSClientConfig{
			CAData:   a.CAPEM,
			CertData: a.admin.CertPEM,
			KeyData:  a.admin.KeyPEM,
		},
		QPS:   200,
		Burst: 400,
	}
}

// KubeconfigPath returns the admin kubeconfig file of this apiserver.
func (a *APIServer) KubeconfigPath() string { return filepath.Join(a.Dir, "admin.kubeconfig") }

// LogPath returns the apiserver's log file.
func (a *APIServer) LogPath() string { return filepath.Join(a.Dir, "kube-apiserver.log") }

// PID returns the process ID.
func (a *APIServer) PID() int { return a.proc.PID() }

// Stop stops the apiserver (SIGTERM, SIGKILL after a grace period).
func (a *APIServer) Stop() error { return a.proc.Stop() }

// startAPIServer writes the certificates and keys an apiserver needs and
// starts it against the environment's etcd.
func (e *Env) startAPIServer(ctx context.Context, cfg APIServerConfig) (*APIServer, error) {
	if cfg.Name == "" {
		cfg.Name = "kube-apiserver"
	}
	apiserverBin, err := e.bins.path(ctx, serverbin.KubeAPIServer)
	if err != nil {
		return nil, err
	}
	port, err := portOrFree("127.0.0.1", cfg.Port)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", cfg.Name, err)
	}
	dir := filepath.Join(e.dir, cfg.Name)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, fmt.Errorf("start %s: %w", cfg.Name, err)
	}
	a := &APIServer{Name: cfg.Name, URL: fmt.Sprintf("https://127.0.0.1:%d", port), Dir: dir, CAPEM: e.ca.CertPEM}
	args, err := e.apiserverFlags(a, port, cfg)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", cfg.Name, err)
	}
	if err := writeKubeconfig(a.KubeconfigPath(), cfg.Name, a.RESTConfig()); err != nil {
		return nil, err
	}
	a.proc, err = process.Start(process.Config{
		Name:      cfg.Name,
		Path:      apiserverBin,
		Args:      args,
		LogPath:   a.LogPath(),
		StopGrace: 3 * time.Second,
	})
	if err != nil {
		return nil, err
	}
	if err := waitHTTPReady(ctx, a.proc, e.cfg.StartTimeout, a.RESTConfig(), "/readyz"); err != nil {
		_ = a.proc.Kill()
		return nil, err
	}
	return a, nil
}

func (e *Env) apiserverFlags(a *APIServer, port int, cfg APIServerConfig) ([]string, error) {
	serving, err := e.ca.Issue(pki.Spec{
		CommonName: "kube-apiserver",
		DNSNames:   []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
		IPs:        []net.IP{net.IPv4(127, 0, 0, 1), net.IPv4(10, 0, 0, 1)},
	})
	if err != nil {
		return nil, err
	}
	certFile, keyFile, err := serving.WriteFiles(a.Dir, "serving")
	if err != nil {
		return nil, err
	}
	a.admin, err = e.ca.Issue(pki.Spec{CommonName: "tenantkit-admin", Organization: []string{"system:masters"}, Usage: pki.Client})
	if err != nil {
		return nil, err
	}
	caFile, err := e.ca.WriteCert(a.Dir, "ca")
	if err != nil {
		return nil, err
	}
	saPub, saKey, err := writeServiceAccountKey(a.Dir)
	if err != nil {
		return nil, err
	}
	etcdCA, etcdCert, etcdKey := e.etcd.ClientFiles()
	disabled := "--disable-admission-plugins=ServiceAccount"
	if cfg.ServiceAccountAdmission {
		disabled = "--disable-admission-plugins="
	}
	flags := []string{
		"--etcd-servers=" + strings.Join(e.etcd.Endpoints(), ","),
		"--etcd-cafile=" + etcdCA, "--etcd-certfile=" + etcdCert, "--etcd-keyfile=" + etcdKey,
		"--etcd-prefix=/tenantkit/" + cfg.Name,
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", port),
		"--cert-dir=" + a.Dir,
		"--tls-cert-file=" + certFile, "--tls-private-key-file=" + keyFile,
		"--client-ca-file=" + caFile,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + saPub,
		"--service-account-signing-key-file=" + saKey,
		"--service-cluster-ip-range=10.0.0.0/24",
		"--authorization-mode=RBAC",
		"--allow-privileged=true",
		disabled,
		"--enable-priority-and-fairness=false",
		"--profiling=false",
		// The lease reconciler refuses loopback advertise addresses.
		"--endpoint-reconciler-type=none",
	}
	return mergeFlags(flags, cfg.ExtraArgs), nil
}

// mergeFlags appends extra to base; a flag in extra replaces the flag of the
// same name in base.
func mergeFlags(base, extra []string) []string {
	name := func(f string) string { n, _, _ := strings.Cut(f, "="); return n }
	override := map[string]bool{}
	for _, f := range extra {
		override[name(f)] = true
	}
	var out []string
	for _, f := range base {
		if !override[name(f)] {
			out = append(out, f)
		}
	}
	return append(out, extra...)
}

// writeServiceAccountKey writes an ECDSA key pair for signing service
// account tokens.
func writeServiceAccountKey(dir string) (pubFile, keyFile string, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", err
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return "", "", err
	}
	pub, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		return "", "", err
	}
	keyFile, pubFile = filepath.Join(dir, "sa.key"), filepath.Join(dir, "sa.pub")
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		return "", "", err
	}
	if err := os.WriteFile(pubFile, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o644); err != nil {
		return "", "", err
	}
	return pubFile, keyFile, nil
}

// waitHTTPReady polls path on the server described by rc until it answers
// 200, the process exits or the timeout passes.
func waitHTTPReady(ctx context.Context, p *process.Process, timeout time.Duration, rc *rest.Config, path string) error {
	transport, err := rest.TransportFor(rc)
	if err != nil {
		return err
	}
	client := &http.Client{Transport: transport}
	return process.WaitReady(ctx, p, timeout, process.HTTPOK(client, rc.Host+path))
}
