package etcdrelocatetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/cozystack/tenantkit/etcdrelocate"
)

// StateOptions shape the state NewState builds.
type StateOptions struct {
	// Voters is the number of voting members. Default 3.
	Voters int
	// Layout is the deployment layout. Default LayoutStatefulSet.
	Layout etcdrelocate.Layout
	// Leader is the index of the leading member. Default 0.
	Leader int
	// SpareNodes is the number of nodes without a member. Default 2.
	SpareNodes int
	// Version is the etcd version every member reports. Default "3.6.11".
	Version string
	// Namespace is the tenant namespace. Default Namespace.
	Namespace string
	// MemberNodes places member i on node NodeName(MemberNodes[i]) (and its
	// volume there). Default: member i on node i. The state then has
	// enough nodes for every index, plus SpareNodes.
	MemberNodes []int
}

// ErrInvalidOptions is returned by NewState for options it cannot build.
var ErrInvalidOptions = errors.New("etcdrelocatetest: invalid state options")

// Namespace is the namespace of states built by NewState.
const Namespace = "tenant-test"

// NodeName returns the name of the i-th node: node-a, node-b, ...
func NodeName(i int) string { return "node-" + string(rune('a'+i)) }

// MemberID returns the etcd member ID NewState gives member i.
func MemberID(i int) uint64 { return 0x8e9e05c52164694d + uint64(i)*0x1111 }

// NewStateT is NewState for tests: it fails the test on an error.
func NewStateT(t testing.TB, opts StateOptions) *etcdrelocate.State {
	t.Helper()
	s, err := NewState(opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// NewState returns the observed state of a healthy tenant etcd: member i runs
// as pod etcd-i (or EtcdMember etcd-i for the v1alpha2 layouts) on node
// NodeName(i), every member is a healthy voter agreeing on the leader, hashes
// are equal, and SpareNodes empty Ready nodes follow. Tests change fields to
// produce the situation they need. It returns an error for options that
// cannot be built.
func NewState(opts StateOptions) (*etcdrelocate.State, error) {
	if opts.Voters == 0 {
		opts.Voters = 3
	}
	if opts.Layout == etcdrelocate.LayoutUnknown {
		opts.Layout = etcdrelocate.LayoutStatefulSet
	}
	if opts.SpareNodes == 0 {
		opts.SpareNodes = 2
	}
	if opts.Version == "" {
		opts.Version = "3.6.11"
	}
	if opts.Leader < 0 || opts.Leader >= opts.Voters {
		return nil, fmt.Errorf("%w: leader %d out of range for %d voters", ErrInvalidOptions, opts.Leader, opts.Voters)
	}
	ns := opts.Namespace
	if ns == "" {
		ns = Namespace
	}
	nodeOf := func(i int) int { return i }
	nodes := opts.Voters
	if len(opts.MemberNodes) > 0 {
		if len(opts.MemberNodes) != opts.Voters {
			return nil, fmt.Errorf("%w: %d member nodes for %d voters", ErrInvalidOptions, len(opts.MemberNodes), opts.Voters)
		}
		nodeOf, nodes = func(i int) int { return opts.MemberNodes[i] }, 0
		for _, n := range opts.MemberNodes {
			nodes = max(nodes, n+1)
		}
	}
	service := "etcd-headless"
	if opts.Layout == etcdrelocate.LayoutEtcdMember {
		service = "etcd"
	}
	s := &etcdrelocate.State{
		Namespace:    ns,
		Cluster:      etcdrelocate.DefaultCluster,
		Layout:       opts.Layout,
		HashRevision: 1000,
		ObservedAt:   time.Unix(1_800_000_000, 0),
	}
	for i := 0; i < nodes+opts.SpareNodes; i++ {
		s.Nodes = append(s.Nodes, etcdrelocate.Node{Name: NodeName(i), Ready: true})
	}
	for i := 0; i < opts.Voters; i++ {
		pod := fmt.Sprintf("etcd-%d", i)
		m := etcdrelocate.Member{
			ID:         MemberID(i),
			Name:       pod,
			PeerURLs:   []string{etcdrelocate.PodPeerURL(pod, service, ns)},
			ClientURLs: []string{etcdrelocate.PodClientURL(pod, service, ns)},
			Status: &etcdrelocate.MemberStatus{
				Version: opts.Version, ClusterID: 0xc105, MemberID: MemberID(i), Leader: MemberID(opts.Leader),
				RaftTerm: 2, RaftIndex: 5000, RaftAppliedIndex: 5000, Revision: 1200, DBSize: 20 << 20, DBSizeInUse: 18 << 20,
			},
			Hash: 0xdecafbad, HashOK: true,
			Pod: &etcdrelocate.Pod{Name: pod, UID: fmt.Sprintf("pod-uid-%d", i), Node: NodeName(nodeOf(i)), Phase: "Running", Ready: true,
				ClaimName: "data-" + pod},
			PVC: &etcdrelocate.PVC{Name: "data-" + pod, UID: fmt.Sprintf("pvc-uid-%d", i), Phase: "Bound", VolumeName: fmt.Sprintf("pv-%d", i),
				StorageClass: "local", Request: "4Gi"},
			PV: &etcdrelocate.PV{Name: fmt.Sprintf("pv-%d", i), UID: fmt.Sprintf("pv-uid-%d", i), Phase: "Bound", ReclaimPolicy: "Delete", Node: NodeName(nodeOf(i))},
		}
		if opts.Layout != etcdrelocate.LayoutStatefulSet {
			m.EtcdMember = pod
		}
		s.Members = append(s.Members, m)
	}
	if opts.Layout == etcdrelocate.LayoutStatefulSet {
		s.Workload = etcdrelocate.Workload{Kind: "StatefulSet", Name: "etcd", Replicas: opts.Voters, ReadyReplicas: opts.Voters,
			CurrentRevision: "etcd-1", UpdateRevision: "etcd-1", ServiceName: service, InitialClusterState: "existing"}
	} else {
		s.Workload = etcdrelocate.Workload{Kind: "EtcdCluster", Name: "etcd", Replicas: opts.Voters, ReadyReplicas: opts.Voters, ServiceName: service,
			Operator: &etcdrelocate.OperatorState{Available: "True/QuorumHealthy", Degraded: "False/QuorumHealthy",
				Progressing: "False/Reconciled", ObservedMatchesSpec: true, ObservedReplicas: opts.Voters, ReadyMembers: opts.Voters}}
	}
	s.PDB = &etcdrelocate.PDB{Name: "etcd", DisruptionsAllowed: opts.Voters - etcdrelocate.Quorum(opts.Voters),
		CurrentHealthy: opts.Voters, DesiredHealthy: etcdrelocate.Quorum(opts.Voters)}
	wild := "*." + service + "." + ns + ".svc"
	s.Certificates = []etcdrelocate.Certificate{
		{Secret: etcdrelocate.ServerTLSSecret, DNSNames: []string{"etcd", wild, "localhost"}, ServerAuth: true, ClientAuth: true},
		{Secret: etcdrelocate.PeerTLSSecret, DNSNames: []string{"etcd", wild, "localhost"}, ServerAuth: true, ClientAuth: true},
	}
	return s, nil
}
