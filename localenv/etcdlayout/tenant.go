package etcdlayout

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/cozystack/tenantkit/internal/portforward"
	"github.com/cozystack/tenantkit/internal/process"
	"github.com/cozystack/tenantkit/localenv"
)

// Tenant is a tenant etcd running in a local environment's cluster: real
// etcd processes on simulated nodes, reachable from the test process by
// their cluster DNS names, or etcd pods on a kind cluster's nodes, reached
// through the API's port-forward (the host has no route to the pod
// network). Start creates the v1alpha1 layout (either provider),
// StartV1alpha2 the v1alpha2 one (simulated cluster only).
type Tenant struct {
	// Layout is the v1alpha1 layout (nil for v1alpha2).
	Layout *V1alpha1
	// V1alpha2 is the v1alpha2 layout (nil for v1alpha1).
	V1alpha2 *V1alpha2
	// Operator is the stand-in operator reconciling a v1alpha2 layout.
	Operator *Operator
	// Namespace is the tenant namespace.
	Namespace string
	// ReadyAfter is the time from creating the StatefulSet to all members
	// Ready.
	ReadyAfter time.Duration

	env  *localenv.Env
	kube kubernetes.Interface
	dial func(ctx context.Context, addr string) (net.Conn, error)
}

// Start creates a v1alpha1 tenant etcd in env's cluster (a simulated
// one: Config.Cluster set, or a kind cluster: Provider Kind) and waits
// until all members are Ready and the cluster state is "existing".
func Start(ctx context.Context, env *localenv.Env, cfg Config) (*Tenant, error) {
	dial, err := dialer(env)
	if err != nil {
		return nil, err
	}
	l, err := NewV1alpha1(cfg)
	if err != nil {
		return nil, err
	}
	kube, err := kubernetes.NewForConfig(env.RESTConfig())
	if err != nil {
		return nil, err
	}
	if err := l.Apply(ctx, env.RESTConfig()); err != nil {
		return nil, err
	}
	begin := time.Now() // Apply creates the StatefulSet last
	if err := l.WaitReady(ctx, env.RESTConfig()); err != nil {
		return nil, err
	}
	return &Tenant{Layout: l, Namespace: l.Config.Namespace, ReadyAfter: time.Since(begin), env: env, kube: kube, dial: dial}, nil
}

// dialer reaches the members of env's tenant etcds: through the simulated
// cluster's DNS and loopback addresses, or, on kind, through the API's
// port-forward to each pod.
func dialer(env *localenv.Env) (func(ctx context.Context, addr string) (net.Conn, error), error) {
	if c := env.Cluster(); c != nil {
		return func(ctx context.Context, addr string) (net.Conn, error) { return c.DialContext(ctx, "tcp", addr) }, nil
	}
	if env.Provider() == localenv.Kind {
		return portforward.Dialer(env.RESTConfig())
	}
	return nil, fmt.Errorf("%w: the environment has no cluster (set localenv.Config.Cluster, or Provider Kind)", ErrInvalidConfig)
}

// StartT is Start for tests: it fails the test on error (with the members'
// log tails) and gives up after 3 minutes.
func StartT(t testing.TB, env *localenv.Env, cfg Config) *Tenant {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	tn, err := Start(ctx, env, cfg)
	if err != nil {
		if c := env.Cluster(); c != nil {
			ns := cfg.Namespace
			if ns == "" {
				ns = Namespace(cfg.Tenant)
			}
			for i := range 5 {
				if info, ok := c.Pod(ns, PodName(i)); ok {
					for _, ct := range info.Containers {
						t.Logf("--- %s/%s on %s (%s):\n%s", ns, PodName(i), info.Node, info.IP, process.Tail(ct.LogPath, 15))
					}
				}
			}
		}
		t.Fatalf("start tenant etcd: %v", err)
	}
	return tn
}

// Kube returns the environment's admin Kubernetes client.
func (tn *Tenant) Kube() kubernetes.Interface { return tn.kube }

// Cluster returns the simulated cluster the tenant runs in (nil on kind).
func (tn *Tenant) Cluster() *localenv.Cluster { return tn.env.Cluster() }

// TLSConfig reads the client TLS material from the tenant's Secrets (see
// clientTLS).
func (tn *Tenant) TLSConfig(ctx context.Context) (*tls.Config, error) {
	return clientTLS(ctx, tn.kube, tn.Namespace)
}

// ClientConfig returns an etcd client configuration for the given members
// (all when none are given): their advertised client URLs, resolved through
// the cluster DNS, with the client certificate from etcd-client-tls. In the
// v1alpha1 layout members are ordinals (etcd-<i>); in v1alpha2 they index
// MemberNames.
func (tn *Tenant) ClientConfig(ctx context.Context, members ...int) (clientv3.Config, error) {
	tlsCfg, err := tn.TLSConfig(ctx)
	if err != nil {
		return clientv3.Config{}, err
	}
	eps, err := tn.endpoints(ctx, members)
	if err != nil {
		return clientv3.Config{}, err
	}
	return clientv3.Config{
		Endpoints:   eps,
		TLS:         tlsCfg,
		DialTimeout: 5 * time.Second,
		Logger:      zap.NewNop(),
		DialOptions: []grpc.DialOption{grpc.WithContextDialer(tn.DialContext)},
	}, nil
}

// Client returns an etcd client for the given members (all when none are
// given). The caller closes it.
func (tn *Tenant) Client(ctx context.Context, members ...int) (*clientv3.Client, error) {
	cfg, err := tn.ClientConfig(ctx, members...)
	if err != nil {
		return nil, err
	}
	return clientv3.New(cfg)
}

// DialContext dials host:port, a member's <pod>.<service>.<ns>.svc
// address: through the simulated cluster's DNS, or on kind a port-forward
// to the pod; the signature fits grpc.WithContextDialer.
func (tn *Tenant) DialContext(ctx context.Context, addr string) (net.Conn, error) {
	return tn.dial(ctx, addr)
}

// clientTLS reads a tenant etcd's client TLS material the way Kamaji's
// DataStore does: the certificate and key of etcd-client-tls (CN root) and
// the ca.crt of etcd-ca-tls.
func clientTLS(ctx context.Context, cs kubernetes.Interface, namespace string) (*tls.Config, error) {
	client, err := cs.CoreV1().Secrets(namespace).Get(ctx, SecretClient, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", SecretClient, err)
	}
	ca, err := cs.CoreV1().Secrets(namespace).Get(ctx, SecretCA, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", SecretCA, err)
	}
	return ClientTLSConfig(client.Data["tls.crt"], client.Data["tls.key"], ca.Data["ca.crt"])
}

func (tn *Tenant) endpoints(ctx context.Context, members []int) ([]string, error) {
	if tn.V1alpha2 == nil {
		if len(members) == 0 {
			for i := range int(tn.Layout.Config.Replicas) {
				members = append(members, i)
			}
		}
		var eps []string
		for _, i := range members {
			eps = append(eps, statefulSetClientURL(tn.Namespace, i))
		}
		return eps, nil
	}
	names, err := tn.MemberNames(ctx)
	if err != nil {
		return nil, err
	}
	if len(members) == 0 {
		for i := range names {
			members = append(members, i)
		}
	}
	var eps []string
	for _, i := range members {
		if i < 0 || i >= len(names) {
			return nil, fmt.Errorf("%w: member %d of %d", ErrInvalidConfig, i, len(names))
		}
		eps = append(eps, memberClientURL(tn.Namespace, names[i]))
	}
	return eps, nil
}
