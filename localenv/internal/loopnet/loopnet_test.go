package loopnet

import (
	"net"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReserve_claimsDistinctRanges(t *testing.T) {
	a, err := Reserve()
	require.NoError(t, err)
	defer a.Release()
	b, err := Reserve()
	require.NoError(t, err)
	defer b.Release()
	require.NotEqual(t, a.Prefix(), b.Prefix())
	require.True(t, a.Prefix().Addr().IsLoopback())
	require.GreaterOrEqual(t, a.Prefix().Addr().As4()[1], byte(32))
}

func TestNetwork_addresses(t *testing.T) {
	n := &Network{x: 40, subnets: map[int]*Subnet{}}
	s := n.Subnet(0)
	require.Equal(t, "127.40.1.0/24", s.Prefix().String())
	require.Equal(t, "127.40.1.1", s.NodeAddr().String())
	require.Equal(t, "127.40.0.10", n.ServiceAddr(10).String())
	require.Same(t, s, n.Subnet(0))

	a, err := s.Allocate("pod-a")
	require.NoError(t, err)
	require.Equal(t, "127.40.1.2", a.String())
	b, err := s.Allocate("pod-b")
	require.NoError(t, err)
	require.Equal(t, "127.40.1.3", b.String())
	s.Release(a)
	c, err := s.Allocate("pod-c")
	require.NoError(t, err)
	require.Equal(t, "127.40.1.4", c.String(), "a released address is not reused at once")

	require.Equal(t, "10.40.1.4", n.ClusterAddr(c).String())
	require.Equal(t, c, n.HostAddr(n.ClusterAddr(c)))
	other := netip.MustParseAddr("10.41.1.4")
	require.Equal(t, other, n.HostAddr(other), "addresses outside the range pass unchanged")
	require.Equal(t, netip.MustParseAddr("127.0.0.1"), n.ClusterAddr(netip.MustParseAddr("127.0.0.1")))
}

func TestSubnet_exhaustion(t *testing.T) {
	s := (&Network{x: 40, subnets: map[int]*Subnet{}}).Subnet(3)
	for range 253 {
		_, err := s.Allocate("p")
		require.NoError(t, err)
	}
	_, err := s.Allocate("p")
	require.ErrorIs(t, err, ErrExhausted)
}

func TestSubnet_addressesBind(t *testing.T) {
	n, err := Reserve()
	require.NoError(t, err)
	defer n.Release()
	a, err := n.Subnet(0).Allocate("pod")
	require.NoError(t, err)
	l, err := net.Listen("tcp", netip.AddrPortFrom(a, 0).String())
	require.NoError(t, err, "every 127/8 address is bindable on Linux")
	l.Close()
}
