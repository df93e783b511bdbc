package localenv

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/cozystack/tenantkit/internal/peerurl"
	"github.com/cozystack/tenantkit/internal/process"
	"github.com/cozystack/tenantkit/localenv/pki"
)

// EtcdCluster is the environment's etcd cluster: real etcd processes on
// loopback with client and peer TLS from a CA of their own.
type EtcdCluster struct {
	bin     string
	dir     string
	token   string
	ca      *pki.CA
	client  *pki.KeyPair
	timeout time.Duration
	log     *slog.Logger

	mu      sync.Mutex
	members []*EtcdMember
	next    int
}

// EtcdMember is one etcd process of the cluster.
type EtcdMember struct {
	// Name is the etcd member name, etcd-0, etcd-1, ...
	Name string
	// ClientURL is the member's client https URL on 127.0.0.1.
	ClientURL string
	// PeerURL is the member's peer https URL on 127.0.0.1.
	PeerURL string
	// Dir holds the member's data directory (Dir/data), TLS files and log.
	Dir string

	cluster *EtcdCluster
	args    []string
	mu      sync.Mutex
	proc    *process.Process
}

func newEtcdCluster(ctx context.Context, bin, dir string, members int, timeout time.Duration, log *slog.Logger) (*EtcdCluster, error) {
	ca, err := pki.NewCA("tenantkit-etcd-ca")
	if err != nil {
		return nil, err
	}
	client, err := ca.Issue(pki.Spec{CommonName: "root", Usage: pki.Client})
	if err != nil {
		return nil, err
	}
	c := &EtcdCluster{bin: bin, dir: dir, token: "tenantkit-" + filepath.Base(filepath.Dir(dir)),
		ca: ca, client: client, timeout: timeout, log: log}
	if _, err := ca.WriteCert(dir, "ca"); err != nil {
		return nil, err
	}
	if _, _, err := client.WriteFiles(dir, "client"); err != nil {
		return nil, err
	}
	for i := 0; i < members; i++ {
		m, err := c.newMember()
		if err != nil {
			return nil, err
		}
		c.members = append(c.members, m)
	}
	var initial []string
	for _, m := range c.members {
		initial = append(initial, m.Name+"="+m.PeerURL)
	}
	for _, m := range c.members {
		m.args = m.flags(strings.Join(initial, ","), "new", c.token)
		if err := m.start(); err != nil {
			c.stop()
			return nil, err
		}
	}
	// Members of a new cluster only become ready together, once they have a
	// leader, so start them all before waiting for any.
	for _, m := range c.members {
		if err := m.waitReady(ctx, c.timeout); err != nil {
			c.stop()
			return nil, err
		}
	}
	return c, nil
}

// newMember allocates a name, ports and certificates for a member.
func (c *EtcdCluster) newMember() (*EtcdMember, error) {
	name := fmt.Sprintf("etcd-%d", c.next)
	c.next++
	dir := filepath.Join(c.dir, name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("etcd member %s: %w", name, err)
	}
	clientPort, err := FreePort()
	if err != nil {
		return nil, err
	}
	peerPort, err := FreePort()
	if err != nil {
		return nil, err
	}
	kp, err := c.ca.Issue(pki.Spec{CommonName: name, DNSNames: []string{"localhost", name},
		IPs: []net.IP{net.IPv4(127, 0, 0, 1)}, Usage: pki.ServerAndClient})
	if err != nil {
		return nil, err
	}
	if _, _, err := kp.WriteFiles(dir, "server"); err != nil {
		return nil, err
	}
	return &EtcdMember{
		Name:      name,
		ClientURL: fmt.Sprintf("https://127.0.0.1:%d", clientPort),
		PeerURL:   fmt.Sprintf("https://127.0.0.1:%d", peerPort),
		Dir:       dir,
		cluster:   c,
	}, nil
}

func (m *EtcdMember) flags(initialCluster, state, token string) []string {
	tls := func(flag, file string) string { return "--" + flag + "=" + filepath.Join(m.Dir, file) }
	ca := filepath.Join(m.cluster.dir, "ca.crt")
	return []string{
		"--name=" + m.Name,
		"--data-dir=" + filepath.Join(m.Dir, "data"),
		"--listen-client-urls=" + m.ClientURL,
		"--advertise-client-urls=" + m.ClientURL,
		"--listen-peer-urls=" + m.PeerURL,
		"--initial-advertise-peer-urls=" + m.PeerURL,
		"--initial-cluster=" + initialCluster,
		"--initial-cluster-state=" + state,
		"--initial-cluster-token=" + token,
		tls("cert-file", "server.crt"), tls("key-file", "server.key"),
		"--trusted-ca-file=" + ca, "--client-cert-auth",
		tls("peer-cert-file", "server.crt"), tls("peer-key-file", "server.key"),
		"--peer-trusted-ca-file=" + ca, "--peer-client-cert-auth",
		"--log-level=warn",
	}
}

func (m *EtcdMember) start() error {
	p, err := process.Start(process.Config{
		Name:    m.Name,
		Path:    m.cluster.bin,
		Args:    m.args,
		LogPath: filepath.Join(m.Dir, "etcd.log"),
	})
	if err != nil {
		return err
	}
	m.mu.Lock()
	m.proc = p
	m.mu.Unlock()
	m.cluster.log.Debug("started etcd member", "member", m.Name, "pid", p.PID(), "client", m.ClientURL)
	return nil
}

// waitReady waits until the member answers Status, which learners also do.
func (m *EtcdMember) waitReady(ctx context.Context, timeout time.Duration) error {
	cli, err := m.cluster.newClient([]string{m.ClientURL})
	if err != nil {
		return err
	}
	defer cli.Close()
	return process.WaitReady(ctx, m.process(), timeout, func(ctx context.Context) error {
		_, err := cli.Status(ctx, m.ClientURL)
		return err
	})
}

func (m *EtcdMember) process() *process.Process {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.proc
}

// Running reports whether the member's process is running.
func (m *EtcdMember) Running() bool {
	p := m.process()
	return p != nil && p.Running()
}

// PID returns the process ID of the member's current process, 0 if never
// started.
func (m *EtcdMember) PID() int {
	if p := m.process(); p != nil {
		return p.PID()
	}
	return 0
}

// LogPath returns the member's log file.
func (m *EtcdMember) LogPath() string { return filepath.Join(m.Dir, "etcd.log") }

// Kill stops the member hard with SIGKILL, as a crash would.
func (m *EtcdMember) Kill() error {
	if p := m.process(); p != nil {
		return p.Kill()
	}
	return nil
}

// Stop stops the member with SIGTERM (SIGKILL after a grace period).
func (m *EtcdMember) Stop() error {
	if p := m.process(); p != nil {
		return p.Stop()
	}
	return nil
}

// Restart starts a stopped member again on its data directory and waits
// until it answers. Restarting a running member is an error.
func (m *EtcdMember) Restart(ctx context.Context) error {
	if m.Running() {
		return fmt.Errorf("restart %s: still running", m.Name)
	}
	if err := m.start(); err != nil {
		return err
	}
	return m.waitReady(ctx, m.cluster.timeout)
}

// Endpoints returns the client URLs of the members currently in the cluster.
func (c *EtcdCluster) Endpoints() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var eps []string
	for _, m := range c.members {
		eps = append(eps, m.ClientURL)
	}
	return eps
}

// Members returns the members started by the environment, in order.
func (c *EtcdCluster) Members() []*EtcdMember {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*EtcdMember(nil), c.members...)
}

// Member returns the member with the given name, or nil.
func (c *EtcdCluster) Member(name string) *EtcdMember {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range c.members {
		if m.Name == name {
			return m
		}
	}
	return nil
}

// TLSConfig returns a client TLS configuration trusted by every member: the
// cluster CA and a client certificate for the user root.
func (c *EtcdCluster) TLSConfig() *tls.Config {
	cert, err := c.client.TLSCertificate()
	if err != nil {
		panic(fmt.Sprintf("localenv: etcd client certificate: %v", err)) // generated by us; cannot fail
	}
	return &tls.Config{RootCAs: c.ca.Pool(), Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
}

// CA returns the etcd cluster's certificate authority, for issuing more
// member or client certificates.
func (c *EtcdCluster) CA() *pki.CA { return c.ca }

// ClientFiles returns the paths of the CA certificate and the client
// certificate and key, for servers that take files (kube-apiserver).
func (c *EtcdCluster) ClientFiles() (caFile, certFile, keyFile string) {
	return filepath.Join(c.dir, "ca.crt"), filepath.Join(c.dir, "client.crt"), filepath.Join(c.dir, "client.key")
}

// Client returns an etcd client for all current members. The caller closes
// it.
func (c *EtcdCluster) Client() (*clientv3.Client, error) {
	return c.newClient(c.Endpoints())
}

func (c *EtcdCluster) newClient(endpoints []string) (*clientv3.Client, error) {
	return clientv3.New(clientv3.Config{
		Endpoints: endpoints,
		TLS:       c.TLSConfig(),
		Logger:    zap.NewNop(),
	})
}

// AddMemberOptions tune AddMember.
type AddMemberOptions struct {
	// Learner adds the member as a non-voting learner.
	Learner bool
}

// AddMember adds a new member to the cluster through the membership API
// (retrying "unhealthy cluster" for a while, as etcd refuses additions for 5
// seconds after any peer reconnects), starts its process with an empty data
// directory and waits until it answers.
func (c *EtcdCluster) AddMember(ctx context.Context, opts AddMemberOptions) (*EtcdMember, error) {
	c.mu.Lock()
	m, err := c.newMember()
	c.mu.Unlock()
	if err != nil {
		return nil, err
	}
	cli, err := c.Client()
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	resp, err := retryUnhealthy(ctx, c.timeout, func(ctx context.Context) (*clientv3.MemberAddResponse, error) {
		if opts.Learner {
			return cli.MemberAddAsLearner(ctx, []string{m.PeerURL})
		}
		return cli.MemberAdd(ctx, []string{m.PeerURL})
	})
	if err != nil {
		return nil, fmt.Errorf("add etcd member %s: %w", m.Name, err)
	}
	var initial []string
	for _, mem := range resp.Members {
		name := mem.Name
		if mem.ID == resp.Member.ID {
			name = m.Name
		}
		for _, u := range mem.PeerURLs {
			initial = append(initial, name+"="+u)
		}
	}
	m.args = m.flags(strings.Join(initial, ","), "existing", c.token)
	if err := m.start(); err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.members = append(c.members, m)
	c.mu.Unlock()
	if err := m.waitReady(ctx, c.timeout); err != nil {
		return nil, err
	}
	return m, nil
}

// RemoveMember removes the named member through the membership API, stops
// its process and deletes its data.
func (c *EtcdCluster) RemoveMember(ctx context.Context, name string) error {
	m := c.Member(name)
	if m == nil {
		return fmt.Errorf("remove etcd member %s: no such member", name)
	}
	var others []string
	for _, o := range c.Members() {
		if o != m {
			others = append(others, o.ClientURL)
		}
	}
	cli, err := c.newClient(others)
	if err != nil {
		return err
	}
	defer cli.Close()
	id, err := memberID(ctx, cli, m.PeerURL)
	if err != nil {
		return fmt.Errorf("remove etcd member %s: %w", name, err)
	}
	if id != 0 {
		_, err := retryUnhealthy(ctx, c.timeout, func(ctx context.Context) (*clientv3.MemberRemoveResponse, error) {
			return cli.MemberRemove(ctx, id)
		})
		if err != nil && !errors.Is(err, rpctypes.ErrMemberNotFound) {
			return fmt.Errorf("remove etcd member %s: %w", name, err)
		}
	}
	if err := m.Stop(); err != nil {
		return err
	}
	c.mu.Lock()
	for i, o := range c.members {
		if o == m {
			c.members = append(c.members[:i], c.members[i+1:]...)
			break
		}
	}
	c.mu.Unlock()
	return os.RemoveAll(m.Dir)
}

// memberID finds a member by peer URL; 0 means not a member.
func memberID(ctx context.Context, cli *clientv3.Client, peerURL string) (uint64, error) {
	resp, err := cli.MemberList(ctx)
	if err != nil {
		return 0, err
	}
	for _, mem := range resp.Members {
		for _, u := range mem.PeerURLs {
			if peerurl.Same(u, peerURL) {
				return mem.ID, nil
			}
		}
	}
	return 0, nil
}

// retryUnhealthy retries f while etcd answers "unhealthy cluster", the
// strict-reconfig-check refusal that follows any peer reconnect.
func retryUnhealthy[T any](ctx context.Context, limit time.Duration, f func(context.Context) (T, error)) (T, error) {
	deadline := time.Now().Add(limit)
	for {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		v, err := f(cctx)
		cancel()
		if err == nil || !errors.Is(err, rpctypes.ErrUnhealthy) || time.Now().After(deadline) {
			return v, err
		}
		select {
		case <-ctx.Done():
			return v, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func (c *EtcdCluster) stop() error {
	var errs []error
	for _, m := range c.Members() {
		errs = append(errs, m.Stop())
	}
	return errors.Join(errs...)
}
