package clusterdns

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// Config configures a Server.
type Config struct {
	// Client reads Services, EndpointSlices and Pods. Required.
	Client kubernetes.Interface
	// Addr is the address to listen on (UDP and TCP, same port). Required;
	// a loopback address from the environment's range.
	Addr netip.Addr
	// Port is the port; zero picks a free one.
	Port int
	// Domain is the cluster domain. Default "cluster.local".
	Domain string
	// HostAddr maps endpoint addresses to the addresses answered, where
	// connections can go (see loopnet's cluster addresses). Nil answers
	// endpoint addresses as they are.
	HostAddr func(netip.Addr) netip.Addr
	// Logger receives query errors at debug level. Default: discard.
	Logger *slog.Logger
}

// Server is a running cluster DNS server.
type Server struct {
	cfg     Config
	addr    string
	udp     net.PacketConn
	tcp     net.Listener
	factory informers.SharedInformerFactory
	stop    chan struct{}
	wg      sync.WaitGroup
	recs    atomic.Pointer[records]
	rebuild func()
	once    sync.Once
}

// Start watches Services, EndpointSlices and Pods, waits until it has read them
// all, and starts answering on cfg.Addr. Stop stops it.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.Client == nil || !cfg.Addr.IsValid() {
		return nil, fmt.Errorf("%w: Client and Addr are required", ErrInvalidConfig)
	}
	if cfg.Domain == "" {
		cfg.Domain = "cluster.local"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg, stop: make(chan struct{})}
	s.recs.Store(&records{})
	if err := s.listen(); err != nil {
		return nil, err
	}
	if err := s.watch(ctx); err != nil {
		s.Stop()
		return nil, err
	}
	s.wg.Add(2)
	go s.serveUDP()
	go s.serveTCP()
	return s, nil
}

// listen binds UDP and TCP on the same port, retrying when a free UDP port
// turns out to be taken for TCP.
func (s *Server) listen() error {
	var lastErr error
	for range 20 {
		udp, err := net.ListenPacket("udp", netip.AddrPortFrom(s.cfg.Addr, uint16(s.cfg.Port)).String())
		if err != nil {
			return fmt.Errorf("cluster dns: %w", err)
		}
		port := udp.LocalAddr().(*net.UDPAddr).Port
		tcp, err := net.Listen("tcp", netip.AddrPortFrom(s.cfg.Addr, uint16(port)).String())
		if err == nil {
			s.udp, s.tcp, s.addr = udp, tcp, net.JoinHostPort(s.cfg.Addr.String(), strconv.Itoa(port))
			return nil
		}
		udp.Close()
		lastErr = err
		if s.cfg.Port != 0 {
			break
		}
	}
	return fmt.Errorf("cluster dns: %w", lastErr)
}

func (s *Server) watch(ctx context.Context) error {
	s.factory = informers.NewSharedInformerFactory(s.cfg.Client, 0)
	svcs := s.factory.Core().V1().Services()
	slices := s.factory.Discovery().V1().EndpointSlices()
	pods := s.factory.Core().V1().Pods()
	s.rebuild = func() {
		all, _ := svcs.Lister().List(labels.Everything())
		es, _ := slices.Lister().List(labels.Everything())
		ps, _ := pods.Lister().List(labels.Everything())
		s.recs.Store(buildRecords(s.cfg.Domain, s.cfg.HostAddr, all, es, ps))
	}
	h := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { s.rebuild() },
		UpdateFunc: func(any, any) { s.rebuild() },
		DeleteFunc: func(any) { s.rebuild() },
	}
	if _, err := svcs.Informer().AddEventHandler(h); err != nil {
		return fmt.Errorf("cluster dns: %w", err)
	}
	if _, err := slices.Informer().AddEventHandler(h); err != nil {
		return fmt.Errorf("cluster dns: %w", err)
	}
	if _, err := pods.Informer().AddEventHandler(h); err != nil {
		return fmt.Errorf("cluster dns: %w", err)
	}
	s.factory.Start(s.stop)
	for typ, ok := range s.factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("cluster dns: sync %v: %w", typ, ctx.Err())
		}
	}
	s.rebuild()
	return nil
}

// Addr returns the server's host:port, the value for TENANTKIT_DNS_SERVER.
func (s *Server) Addr() string { return s.addr }

// Domain returns the cluster domain.
func (s *Server) Domain() string { return s.cfg.Domain }

// Resolver returns a resolver that sends every query to this server. Names
// outside the cluster get NXDOMAIN (except those in /etc/hosts, which Go's
// resolver reads first).
func (s *Server) Resolver() *net.Resolver { return Resolver(s.addr) }

// Resolver returns a resolver that sends every query to the DNS server at
// addr (host:port), for processes that only know the address (Server.Addr,
// passed on to a child process).
func Resolver(addr string) *net.Resolver {
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
	}
}

// Dial returns a dial function that resolves host names through the DNS
// server at addr; its signature fits net.Dialer.DialContext and
// http.Transport.DialContext.
func Dial(addr string) func(ctx context.Context, network, address string) (net.Conn, error) {
	d := &net.Dialer{Resolver: Resolver(addr)}
	return d.DialContext
}

// DialContext dials address, resolving its host name through this server:
// the dialer to give clients that should reach pods by their cluster names
// (for example grpc.WithContextDialer for an etcd client). An IP address is
// mapped through Config.HostAddr first, so pod IPs work too.
func (s *Server) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	if host, port, err := net.SplitHostPort(address); err == nil && s.cfg.HostAddr != nil {
		if a, err := netip.ParseAddr(host); err == nil {
			address = net.JoinHostPort(s.cfg.HostAddr(a).String(), port)
		}
	}
	d := net.Dialer{Resolver: s.Resolver()}
	return d.DialContext(ctx, network, address)
}

// Stop stops answering and watching. It is safe to call more than once.
func (s *Server) Stop() {
	s.once.Do(func() {
		close(s.stop)
		if s.udp != nil {
			s.udp.Close()
			s.tcp.Close()
		}
		s.wg.Wait()
		if s.factory != nil {
			s.factory.Shutdown()
		}
	})
}

func (s *Server) serveUDP() {
	defer s.wg.Done()
	buf := make([]byte, 4096)
	for {
		n, from, err := s.udp.ReadFrom(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		out, err := answer(s.recs.Load(), s.cfg.Domain, buf[:n], maxUDPSize)
		if err != nil {
			s.cfg.Logger.Debug("dns query dropped", "from", from, "err", err)
			continue
		}
		_, _ = s.udp.WriteTo(out, from)
	}
}

func (s *Server) serveTCP() {
	defer s.wg.Done()
	var conns sync.WaitGroup
	defer conns.Wait()
	for {
		c, err := s.tcp.Accept()
		if err != nil {
			return
		}
		conns.Add(1)
		go func() {
			defer conns.Done()
			s.serveConn(c)
		}()
	}
}

// serveConn answers length-prefixed queries on one TCP connection until the
// client closes it or stays idle for 10 seconds.
func (s *Server) serveConn(c net.Conn) {
	done := make(chan struct{})
	defer close(done)
	defer c.Close()
	go func() {
		select {
		case <-s.stop:
			c.Close()
		case <-done:
		}
	}()
	for {
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		var size [2]byte
		if _, err := io.ReadFull(c, size[:]); err != nil {
			return
		}
		req := make([]byte, binary.BigEndian.Uint16(size[:]))
		if _, err := io.ReadFull(c, req); err != nil {
			return
		}
		out, err := answer(s.recs.Load(), s.cfg.Domain, req, 0)
		if err != nil {
			return
		}
		msg := binary.BigEndian.AppendUint16(nil, uint16(len(out)))
		if _, err := c.Write(append(msg, out...)); err != nil {
			return
		}
	}
}
