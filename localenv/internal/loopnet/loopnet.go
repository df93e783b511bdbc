// Package loopnet hands out loopback addresses for a simulated cluster
// network. On Linux all of 127.0.0.0/8 is loopback, so every address in it
// can be bound without configuring anything. A Network reserves one /16 of
// it, 127.X.0.0/16 with a random X, for one local environment: node i gets
// the subnet 127.X.(i+1).0/24 (its own address is .1, pods get .2 to .254)
// and 127.X.0.0/24 is left for the environment's services (cluster DNS).
//
// # Cluster addresses
//
// The apiserver refuses loopback addresses in Endpoints and EndpointSlices,
// so the addresses the cluster sees (pod IPs, node IPs, pod CIDRs) are
// twins in 10.X.0.0/16: the pod whose process listens on 127.X.Y.Z has the
// pod IP 10.X.Y.Z. ClusterAddr and HostAddr translate between the two; the
// cluster DNS answers with host addresses, which is where connections must
// go. X is at least 32, so the twins never overlap the apiserver's service
// range 10.0.0.0/24.
//
// Several environments run side by side on one machine (parallel tests,
// other engineers' tests). Reserve claims its /16 by holding a listener on
// 127.X.0.1 at a fixed port for the Network's lifetime, so a second
// environment that picks the same X fails to bind and tries another one.
//
// # Errors
//
// Reserve returns ErrExhausted when no /16 could be claimed; Subnet.Allocate
// returns ErrExhausted when a node has no free address left.
//
// # Testing
//
// Everything here is in memory apart from the lock listener; tests need no
// servers.
package loopnet

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"sync"
)

// ErrExhausted is returned when no address range or address is free.
var ErrExhausted = errors.New("loopnet: no free loopback addresses")

// lockPort is the port every Network binds on 127.X.0.1 to claim 127.X/16.
// It is above Linux's default ephemeral range (32768-60999), so the kernel
// never hands it out to a client socket.
const lockPort = 61999

// Network is a reserved 127.X.0.0/16. Its methods are safe for concurrent
// use.
type Network struct {
	x    byte
	lock net.Listener

	mu      sync.Mutex
	subnets map[int]*Subnet
}

// Reserve claims a free 127.X.0.0/16 and returns it. Release gives it back.
func Reserve() (*Network, error) {
	// 127.0-31 are left alone: 127.0.0.1 and friends are in common use.
	candidates := rand.Perm(224)
	for _, c := range candidates {
		x := byte(c + 32)
		l, err := net.Listen("tcp", fmt.Sprintf("127.%d.0.1:%d", x, lockPort))
		if err != nil {
			continue
		}
		return &Network{x: x, lock: l, subnets: map[int]*Subnet{}}, nil
	}
	return nil, fmt.Errorf("%w: every 127.X.0.0/16 is claimed", ErrExhausted)
}

// Release gives the range back. Addresses handed out stay valid loopback
// addresses but may be reused by another environment.
func (n *Network) Release() error { return n.lock.Close() }

// Prefix returns the reserved range, 127.X.0.0/16.
func (n *Network) Prefix() netip.Prefix {
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{127, n.x, 0, 0}), 16)
}

// ClusterPrefix returns the cluster twin of the range, 10.X.0.0/16.
func (n *Network) ClusterPrefix() netip.Prefix {
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{10, n.x, 0, 0}), 16)
}

// ClusterAddr maps a host address 127.X.Y.Z of the network to its cluster
// twin 10.X.Y.Z. Other addresses are returned unchanged.
func (n *Network) ClusterAddr(a netip.Addr) netip.Addr {
	if !n.Prefix().Contains(a) {
		return a
	}
	b := a.As4()
	b[0] = 10
	return netip.AddrFrom4(b)
}

// HostAddr maps a cluster address 10.X.Y.Z back to the host address
// 127.X.Y.Z that can be dialled. Other addresses are returned unchanged.
func (n *Network) HostAddr(a netip.Addr) netip.Addr {
	if !n.ClusterPrefix().Contains(a) {
		return a
	}
	b := a.As4()
	b[0] = 127
	return netip.AddrFrom4(b)
}

// ServiceAddr returns 127.X.0.i, an address for an environment service such
// as the cluster DNS server. i must be in 2..254 (1 holds the lock).
func (n *Network) ServiceAddr(i byte) netip.Addr {
	return netip.AddrFrom4([4]byte{127, n.x, 0, i})
}

// Subnet returns node i's /24, 127.X.(i+1).0/24, creating it on first use.
// i must be in 0..253.
func (n *Network) Subnet(i int) *Subnet {
	if i < 0 || i > 253 {
		panic(fmt.Sprintf("loopnet: node index %d out of range 0..253", i))
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	s, ok := n.subnets[i]
	if !ok {
		s = &Subnet{prefix: netip.PrefixFrom(netip.AddrFrom4([4]byte{127, n.x, byte(i + 1), 0}), 24), used: map[netip.Addr]string{}}
		n.subnets[i] = s
	}
	return s
}

// Subnet is one node's /24: the node's address is .1, pods get .2 to .254.
type Subnet struct {
	prefix netip.Prefix

	mu   sync.Mutex
	used map[netip.Addr]string
	next byte
}

// Prefix returns the subnet, 127.X.Y.0/24.
func (s *Subnet) Prefix() netip.Prefix { return s.prefix }

// NodeAddr returns the node's own address, 127.X.Y.1.
func (s *Subnet) NodeAddr() netip.Addr {
	b := s.prefix.Addr().As4()
	b[3] = 1
	return netip.AddrFrom4(b)
}

// Allocate returns a free pod address for owner (a pod UID, for example).
// Addresses are handed out round robin, so a released address is not reused
// at once: a client still holding it sees a refused connection rather than
// another pod.
func (s *Subnet) Allocate(owner string) (netip.Addr, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.prefix.Addr().As4()
	for range 253 {
		s.next++
		if s.next < 2 || s.next == 255 {
			s.next = 2
		}
		b[3] = s.next
		a := netip.AddrFrom4(b)
		if _, taken := s.used[a]; !taken {
			s.used[a] = owner
			return a, nil
		}
	}
	return netip.Addr{}, fmt.Errorf("%w in %s", ErrExhausted, s.prefix)
}

// Release frees an address handed out by Allocate.
func (s *Subnet) Release(a netip.Addr) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.used, a)
}
