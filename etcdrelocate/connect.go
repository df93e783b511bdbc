package etcdrelocate

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
)

// DialFunc opens a connection to a member's client address ("host:port", as
// in its client URL). Set Config.Dial to reach members from outside the
// cluster network: PortForwardDialer tunnels through the Kubernetes API.
// TLS still verifies the member's DNS name, not the tunnel's address.
type DialFunc func(ctx context.Context, addr string) (net.Conn, error)

// connector builds etcd clients with the library's TLS and dialer.
type connector struct {
	tls  *tls.Config
	dial DialFunc
	call time.Duration

	mu      sync.Mutex
	members map[string]*clientv3.Client
}

// member returns a client whose only endpoint is url, kept for reuse until
// close: Status, HashKV and MoveLeader go to one member each.
func (c *connector) member(url string) (*clientv3.Client, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cli := c.members[url]; cli != nil {
		return cli, nil
	}
	cli, err := c.client(url)
	if err != nil {
		return nil, err
	}
	if c.members == nil {
		c.members = map[string]*clientv3.Client{}
	}
	c.members[url] = cli
	return cli, nil
}

// ops returns the membership operations on cli, each bounded by bound,
// reaching single members through fresh clients of c.
func (c *connector) ops(cli MembershipClient, log *slog.Logger, bound time.Duration) *memberOps {
	one := func(url string) (MembershipClient, func(), error) {
		m, err := c.client(url)
		if err != nil {
			return nil, nil, err
		}
		return m, func() { m.Close() }, nil
	}
	return &memberOps{api: cli, one: one, log: log, bound: bound, call: c.call}
}

// close closes the member clients.
func (c *connector) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for url, cli := range c.members {
		cli.Close()
		delete(c.members, url)
	}
}

// client returns a client for endpoints. The caller closes it.
func (c *connector) client(endpoints ...string) (*clientv3.Client, error) {
	if len(endpoints) == 0 {
		return nil, fmt.Errorf("%w: no etcd endpoints", ErrInvalidConfig)
	}
	cfg := clientv3.Config{
		Endpoints:            endpoints,
		TLS:                  c.tls.Clone(),
		DialTimeout:          5 * time.Second,
		DialKeepAliveTime:    10 * time.Second,
		DialKeepAliveTimeout: 5 * time.Second,
		Logger:               zap.NewNop(),
	}
	// Reconnect quickly: a member's pod that restarts or moves is back
	// within a second, and gRPC's default back-off (1 s growing to 2 min)
	// would leave the client waiting long after it is.
	cfg.DialOptions = append(cfg.DialOptions, grpc.WithConnectParams(grpc.ConnectParams{
		Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: time.Second},
		MinConnectTimeout: 20 * time.Second,
	}))
	if c.dial != nil {
		cfg.DialOptions = append(cfg.DialOptions, grpc.WithContextDialer(c.dial))
	}
	cli, err := clientv3.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("etcd client for %v: %w", endpoints, err)
	}
	return cli, nil
}

// callCtx bounds one RPC.
func (c *connector) callCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	d := c.call
	if d <= 0 {
		d = 10 * time.Second
	}
	return context.WithTimeout(ctx, d)
}
