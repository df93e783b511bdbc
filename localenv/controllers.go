package localenv

import (
	"cmp"
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/cozystack/tenantkit/internal/process"
	"github.com/cozystack/tenantkit/internal/serverbin"
	"github.com/cozystack/tenantkit/localenv/pki"
)

// controlPlaneComponent is kube-controller-manager or kube-scheduler started
// against one apiserver with a client certificate of its own.
type controlPlaneComponent struct {
	server serverbin.Server
	user   string // client certificate CN, the component's RBAC identity
	flags  func(dir string) []string
	// name names its directory and Component; "" means server.Name.
	name string
}

// startControllers starts kube-controller-manager and kube-scheduler against
// apiserver a and waits until both answer /healthz. Both are tracked, so
// Stop stops them.
func (e *Env) startControllers(ctx context.Context, a *APIServer, cc ClusterConfig) error {
	saKey, caFile := filepath.Join(a.Dir, "sa.key"), filepath.Join(a.Dir, "ca.crt")
	kcm := controlPlaneComponent{
		server: serverbin.KubeControllerManager,
		user:   "system:kube-controller-manager",
		flags: func(string) []string {
			return []string{
				"--service-account-private-key-file=" + saKey,
				"--root-ca-file=" + caFile,
				// Each controller runs as its own service account, as kubeadm
				// sets it up, so the bootstrap RBAC roles are exercised.
				"--use-service-account-credentials=true",
				"--cluster-name=tenantkit",
				fmt.Sprintf("--node-monitor-period=%s", cc.heartbeat()),
				fmt.Sprintf("--node-monitor-grace-period=%s", cc.NodeMonitorGracePeriod),
			}
		},
	}
	sched := controlPlaneComponent{
		server: serverbin.KubeScheduler,
		user:   "system:kube-scheduler",
		flags:  func(string) []string { return nil },
	}
	if err := e.bins.prepare(ctx, kcm.server, sched.server); err != nil {
		return err
	}
	for _, c := range []controlPlaneComponent{kcm, sched} {
		if err := e.startControlPlaneComponent(ctx, a, c); err != nil {
			return err
		}
	}
	return nil
}

func (e *Env) startControlPlaneComponent(ctx context.Context, a *APIServer, c controlPlaneComponent) error {
	bin, err := e.bins.path(ctx, c.server)
	if err != nil {
		return err
	}
	name := cmp.Or(c.name, c.server.Name)
	dir := filepath.Join(e.dir, name)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return fmt.Errorf("start %s: %w", name, err)
	}
	kp, err := e.ca.Issue(pki.Spec{CommonName: c.user, Usage: pki.Client})
	if err != nil {
		return err
	}
	rc := a.RESTConfig()
	rc.CertData, rc.KeyData = kp.CertPEM, kp.KeyPEM
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := writeKubeconfig(kubeconfig, c.server.Name, rc); err != nil {
		return err
	}
	port, err := FreePort()
	if err != nil {
		return err
	}
	args := append([]string{
		"--kubeconfig=" + kubeconfig,
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", port),
		"--cert-dir=" + dir,
		// The secure port serves only health checks here; without this the
		// component keeps failing to read a request-header CA the
		// apiserver does not configure.
		"--authentication-skip-lookup=true",
		"--leader-elect=false",
		"--profiling=false",
	}, c.flags(dir)...)
	logPath := filepath.Join(dir, c.server.Name+".log")
	p, err := process.Start(process.Config{
		Name: c.server.Name, Path: bin, Args: args, LogPath: logPath, StopGrace: 3 * time.Second,
	})
	if err != nil {
		return err
	}
	endpoint := fmt.Sprintf("https://127.0.0.1:%d", port)
	e.Track(Component{Name: name, Version: e.bins.version(c.server), Endpoint: endpoint, LogPath: logPath, Process: p})
	if err := waitHealthz(ctx, p, e.cfg.StartTimeout, endpoint+"/healthz"); err != nil {
		return err
	}
	e.log.Info("control plane component ready", "name", name, "endpoint", endpoint)
	return nil
}

// waitHealthz polls url (served with a self-signed certificate, as the
// controller manager and scheduler generate one in --cert-dir) until it
// answers 200.
func waitHealthz(ctx context.Context, p *process.Process, timeout time.Duration, url string) error {
	client := &http.Client{Transport: &http.Transport{
		// The component's own throwaway serving certificate; nothing but
		// the health answer is read over this connection.
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // local health check only
	}}
	defer client.CloseIdleConnections()
	return process.WaitReady(ctx, p, timeout, process.HTTPOK(client, url))
}
