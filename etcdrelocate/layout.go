package etcdrelocate

import (
	"fmt"
	"net"
	"net/url"

	"github.com/cozystack/tenantkit/internal/peerurl"
	"github.com/cozystack/tenantkit/internal/portforward"
)

// Layout says how a tenant etcd is deployed, which decides the plan.
type Layout int

const (
	// LayoutUnknown is the zero Layout: nothing recognisable was found.
	LayoutUnknown Layout = iota
	// LayoutStatefulSet is the aenix etcd-operator (etcd.aenix.io/v1alpha1,
	// Cozystack up to v1.5): StatefulSet "etcd", pods etcd-N, PVCs
	// data-etcd-N, headless Service etcd-headless. The operator manages no
	// membership; the plan calls the membership API itself.
	LayoutStatefulSet
	// LayoutEtcdMember is the Cozystack etcd-operator
	// (etcd-operator.cozystack.io/v1alpha2, Cozystack v1.6+): one EtcdMember
	// object per member with a generated name, owning its pod and PVC
	// data-<member>. The operator manages membership; the plan goes through
	// it.
	LayoutEtcdMember
	// LayoutMigrated is a v1alpha2 cluster adopted from the StatefulSet
	// layout by etcd-migrate: EtcdMember objects with the legacy names
	// (etcd-N, etcd-headless) until the members roll. Planned like
	// LayoutEtcdMember.
	LayoutMigrated
)

func (l Layout) String() string {
	switch l {
	case LayoutStatefulSet:
		return "statefulset (etcd.aenix.io/v1alpha1)"
	case LayoutEtcdMember:
		return "etcdmember (etcd-operator.cozystack.io/v1alpha2)"
	case LayoutMigrated:
		return "etcdmember, migrated with legacy names (etcd-operator.cozystack.io/v1alpha2)"
	default:
		return "unknown"
	}
}

// layoutNames are the short names used in checkpoints and flags.
var layoutNames = map[Layout]string{
	LayoutStatefulSet: "statefulset",
	LayoutEtcdMember:  "etcdmember",
	LayoutMigrated:    "migrated",
}

// MarshalText returns the layout's short name (statefulset, etcdmember,
// migrated).
func (l Layout) MarshalText() ([]byte, error) {
	if n, ok := layoutNames[l]; ok {
		return []byte(n), nil
	}
	return nil, fmt.Errorf("unknown layout %d", int(l))
}

// UnmarshalText parses a short name written by MarshalText.
func (l *Layout) UnmarshalText(b []byte) error {
	for k, n := range layoutNames {
		if n == string(b) {
			*l = k
			return nil
		}
	}
	return fmt.Errorf("unknown layout %q", b)
}

// operatorManaged reports whether the operator owns membership changes.
func (l Layout) operatorManaged() bool { return l == LayoutEtcdMember || l == LayoutMigrated }

// Names and labels of the Cozystack layouts.
const (
	// DefaultCluster is the name Cozystack gives every tenant EtcdCluster.
	DefaultCluster = "etcd"
	// clientTLSSecret holds the client certificate (CN root) the library
	// uses; caTLSSecret holds the CA that signed the serving certificates.
	clientTLSSecret = "etcd-client-tls"
	caTLSSecret     = "etcd-ca-tls"
	// ServerTLSSecret and PeerTLSSecret hold the members' certificates,
	// whose SANs must cover the member's DNS name.
	ServerTLSSecret = "etcd-server-tls"
	PeerTLSSecret   = "etcd-peer-tls"
	// clusterStateConfigMap is the aenix operator's ConfigMap with
	// ETCD_INITIAL_CLUSTER_STATE.
	clusterStateConfigMap = "etcd-cluster-state"

	// labelV1alpha2Cluster selects a v1alpha2 cluster's pods and
	// EtcdMembers; labelV1alpha2Role=voter marks voters' pods.
	labelV1alpha2Cluster = "etcd-operator.cozystack.io/cluster"
	labelV1alpha2Role    = "etcd-operator.cozystack.io/role"
	// annotationHeadlessService names the legacy headless Service of a
	// migrated member.
	annotationHeadlessService = "etcd-operator.cozystack.io/headless-service-name"

	// peerPort and clientPort are etcd's ports in every layout.
	peerPort   = "2380"
	clientPort = "2379"
)

// API groups of the two operators.
const (
	groupAenix     = "etcd.aenix.io"
	GroupCozystack = "etcd-operator.cozystack.io"
)

// podHost is the DNS name of a member's pod under a headless Service:
// <pod>.<service>.<ns>.svc.
func podHost(pod, service, namespace string) string {
	return pod + "." + service + "." + namespace + ".svc"
}

// PodPeerURL is the peer URL the operators give the member running in pod:
// https://<pod>.<service>.<ns>.svc:2380.
func PodPeerURL(pod, service, namespace string) string {
	return "https://" + net.JoinHostPort(podHost(pod, service, namespace), peerPort)
}

// PodClientURL is the client URL of the member running in pod:
// https://<pod>.<service>.<ns>.svc:2379.
func PodClientURL(pod, service, namespace string) string {
	return "https://" + net.JoinHostPort(podHost(pod, service, namespace), clientPort)
}

// sameURL reports whether two peer or client URLs name the same endpoint
// (case, trailing dot, cluster-domain suffix and default port aside):
// members are matched by peer URL, never by name.
func sameURL(a, b string) bool { return peerurl.Same(a, b) }

// hostOf returns the host of a URL, or "".
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// podOfHost splits <pod>.<service>.<ns>.svc into pod and namespace.
func podOfHost(host string) (pod, namespace string, err error) { return portforward.PodOfHost(host) }
