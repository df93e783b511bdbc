package localenv

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os/exec"
	"strings"
)

// KindHostAddress returns this host's IPv4 address on the kind cluster's
// own docker network (tenantkit-kind-<name>, the network's gateway): a
// server of this host that listens there, and not on 0.0.0.0, is
// reachable from the cluster's nodes, and from the host's processes, as
// an issuer of the apiserver's authentication configuration must be
// (StartDex listens there on a kind environment). The node containers
// cannot reach 127.0.0.1 of the host: it is theirs.
//
// It returns ErrUnsupported for the local provider, and an error when the
// docker engine's networks are not this host's (a remote engine).
func (e *Env) KindHostAddress(ctx context.Context) (netip.Addr, error) {
	if e.provider != Kind || e.kindName == "" {
		return netip.Addr{}, fmt.Errorf("%w: KindHostAddress needs the kind provider", ErrUnsupported)
	}
	network := kindNetworkPrefix + e.kindName
	out, err := exec.CommandContext(ctx, "docker", "network", "inspect", "--format",
		"{{range .IPAM.Config}}{{.Subnet}} {{end}}", network).CombinedOutput()
	if err != nil {
		return netip.Addr{}, fmt.Errorf("localenv: docker network inspect %s: %s", network, strings.TrimSpace(string(out)))
	}
	var subnets []netip.Prefix
	for _, f := range strings.Fields(string(out)) {
		if p, err := netip.ParsePrefix(f); err == nil && p.Addr().Is4() {
			subnets = append(subnets, p)
		}
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return netip.Addr{}, fmt.Errorf("localenv: %w", err)
	}
	if a, ok := hostAddressIn(subnets, addrs); ok {
		return a, nil
	}
	return netip.Addr{}, fmt.Errorf("localenv: no address of this host is on docker network %s (IPv4 subnets %v): is the docker engine remote?", network, subnets)
}

// hostAddressIn returns the first of addrs (a host's interface addresses)
// inside one of subnets.
func hostAddressIn(subnets []netip.Prefix, addrs []net.Addr) (netip.Addr, bool) {
	for _, a := range addrs {
		ipn, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		ip, ok := netip.AddrFromSlice(ipn.IP)
		if !ok {
			continue
		}
		ip = ip.Unmap()
		for _, s := range subnets {
			if s.Contains(ip) {
				return ip, true
			}
		}
	}
	return netip.Addr{}, false
}
