package clusterdns

import (
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// records is an immutable snapshot of the names the server answers. Names
// are stored in their short form, "name.ns.svc", lower case, without the
// cluster domain and without a trailing dot.
type records struct {
	addrs map[string][]netip.Addr
	cname map[string]string
	// ptr maps a pod address to fully qualified names, the way CoreDNS
	// answers reverse lookups: "host.svc.ns.svc.<domain>.".
	ptr map[netip.Addr][]string
}

// buildRecords computes the records of services, their endpoint slices and
// the pods with loopback addresses (see addPodRecords), following the Kubernetes DNS specification:
//
//   - <svc>.<ns>.svc: for a headless service, the addresses of its ready
//     endpoints; for a service with a cluster IP, also the addresses of its
//     ready endpoints instead of the cluster IP, because nothing routes
//     service IPs here (no kube-proxy);
//   - <hostname>.<svc>.<ns>.svc: the address of an endpoint with that
//     hostname (pods with spec.hostname and spec.subdomain = svc, as
//     StatefulSet pods have);
//   - an ExternalName service answers with a CNAME.
//
// An endpoint counts as ready when its ready condition is unset or true; the
// endpoint slice controller marks every endpoint ready for services with
// publishNotReadyAddresses, as the etcd headless services have.
//
// hostAddr maps an endpoint address to the address answered (nil: as is).
func buildRecords(domain string, hostAddr func(netip.Addr) netip.Addr, services []*corev1.Service,
	endpointSlices []*discoveryv1.EndpointSlice, pods []*corev1.Pod) *records {
	r := &records{addrs: map[string][]netip.Addr{}, cname: map[string]string{}, ptr: map[netip.Addr][]string{}}
	known := map[string]*corev1.Service{}
	for _, svc := range services {
		name := strings.ToLower(svc.Name + "." + svc.Namespace + ".svc")
		known[svc.Namespace+"/"+svc.Name] = svc
		if svc.Spec.Type == corev1.ServiceTypeExternalName && svc.Spec.ExternalName != "" {
			r.cname[name] = strings.TrimSuffix(strings.ToLower(svc.Spec.ExternalName), ".") + "."
		}
	}
	for _, es := range endpointSlices {
		svcName := es.Labels[discoveryv1.LabelServiceName]
		if svcName == "" || known[es.Namespace+"/"+svcName] == nil {
			continue
		}
		if es.AddressType != discoveryv1.AddressTypeIPv4 && es.AddressType != discoveryv1.AddressTypeIPv6 {
			continue
		}
		base := strings.ToLower(svcName + "." + es.Namespace + ".svc")
		for _, ep := range es.Endpoints {
			if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
				continue
			}
			for _, s := range ep.Addresses {
				a, err := netip.ParseAddr(s)
				if err != nil {
					continue
				}
				if hostAddr != nil {
					a = hostAddr(a)
				}
				r.add(base, a)
				if ep.Hostname != nil && *ep.Hostname != "" {
					host := strings.ToLower(*ep.Hostname) + "." + base
					r.add(host, a)
					r.ptr[a] = appendUnique(r.ptr[a], host+"."+domain+".")
				}
			}
		}
	}
	r.addPodRecords(domain, hostAddr, services, pods)
	for name := range r.addrs {
		slices.SortFunc(r.addrs[name], func(a, b netip.Addr) int { return a.Compare(b) })
	}
	return r
}

func (r *records) add(name string, a netip.Addr) {
	r.addrs[name] = appendUnique(r.addrs[name], a)
}

func appendUnique[T comparable](s []T, v T) []T {
	if slices.Contains(s, v) {
		return s
	}
	return append(s, v)
}

// shortName maps a query name to the short form records use: lower case,
// no trailing dot, the cluster domain removed. ok is false for names outside
// the cluster's "svc" zone.
func shortName(qname, domain string) (name string, ok bool) {
	name = strings.TrimSuffix(strings.ToLower(qname), ".")
	name = strings.TrimSuffix(name, "."+strings.ToLower(domain))
	return name, strings.HasSuffix(name, ".svc")
}

// reverseAddr parses an in-addr.arpa or ip6.arpa name.
func reverseAddr(qname string) (netip.Addr, bool) {
	name := strings.TrimSuffix(strings.ToLower(qname), ".")
	v4, ok := strings.CutSuffix(name, ".in-addr.arpa")
	if !ok {
		return netip.Addr{}, false
	}
	parts := strings.Split(v4, ".")
	if len(parts) != 4 {
		return netip.Addr{}, false
	}
	slices.Reverse(parts)
	a, err := netip.ParseAddr(strings.Join(parts, "."))
	return a, err == nil && a.Is4()
}
