package etcdrelocate

import (
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// State is one observation of a tenant etcd: etcd's own view (members,
// Status per member, alarms, HashKV) joined with Kubernetes' (pods, PVCs,
// PVs, nodes, the workload, the PDB) by peer URL. Observe fills it in;
// Preflight and PlanFor read it and do no I/O, so tests can build one by hand
// (see package etcdrelocatetest).
type State struct {
	// Namespace and Cluster name the tenant etcd (Cluster is the
	// EtcdCluster or StatefulSet name, "etcd" in Cozystack).
	Namespace string
	Cluster   string
	// Layout is how the cluster is deployed.
	Layout Layout
	// Members are etcd's members (MemberList), sorted by pod name then ID,
	// each joined with its Kubernetes objects.
	Members []Member
	// Alarms are the active alarms (AlarmList).
	Alarms []Alarm
	// HashRevision is the revision at which Member.Hash was taken (0 if
	// hashes were not taken).
	HashRevision int64
	// Nodes are the cluster's nodes.
	Nodes []Node
	// Workload describes the StatefulSet (LayoutStatefulSet) or the
	// EtcdCluster (v1alpha2 layouts).
	Workload Workload
	// PDB is the cluster's PodDisruptionBudget, nil if none.
	PDB *PDB
	// Certificates are the parsed serving and peer certificates.
	Certificates []Certificate
	// DefragJobs are the names of active Jobs whose name mentions
	// "defrag".
	DefragJobs []string
	// Checkpoint is the relocation checkpoint found in the namespace, nil if
	// none.
	Checkpoint *Checkpoint
	// Lease is the relocation Lease found in the namespace, nil if none:
	// an executor is at work while it is held.
	Lease *LeaseInfo
	// ObservedAt is when the observation finished.
	ObservedAt time.Time
}

// Member is one etcd member and the Kubernetes objects that back it.
type Member struct {
	// ID is the etcd member ID.
	ID uint64
	// Name is the etcd member name; empty until the member has started.
	Name string
	// PeerURLs and ClientURLs are as etcd reports them.
	PeerURLs   []string
	ClientURLs []string
	// IsLearner reports a non-voting learner.
	IsLearner bool
	// Status is the member's answer to Status, nil if it did not answer;
	// StatusError says why.
	Status      *MemberStatus
	StatusError string
	// Hash is the member's HashKV at State.HashRevision; HashOK is false if
	// it was not taken, and HashError then says why (empty for a member
	// that was not asked: a learner, or one that did not answer Status).
	Hash      uint32
	HashOK    bool
	HashError string

	// Pod, PVC and PV are the Kubernetes objects of the member, nil where
	// none was found.
	Pod *Pod
	PVC *PVC
	PV  *PV
	// EtcdMember is the v1alpha2 EtcdMember object's name ("" in the
	// StatefulSet layout).
	EtcdMember string
}

// MemberStatus is a member's answer to the Status RPC.
type MemberStatus struct {
	Version          string
	ClusterID        uint64
	MemberID         uint64
	Leader           uint64
	RaftTerm         uint64
	RaftIndex        uint64
	RaftAppliedIndex uint64
	Revision         int64
	DBSize           int64
	DBSizeInUse      int64
	IsLearner        bool
	// Errors are the member's reported errors (alarms, "no leader").
	Errors []string
}

// Pod is the member's pod.
type Pod struct {
	Name     string
	UID      string
	Node     string
	Phase    string
	Ready    bool
	Restarts int32
	Deleting bool
	// ClaimName is the PVC the pod's data volume uses.
	ClaimName string
	// Scheduling is what of the pod's spec decides the nodes it may run
	// on: node selector, affinity, tolerations.
	Scheduling Scheduling
}

// Scheduling is the part of a pod's spec that decides where it may run.
type Scheduling struct {
	NodeSelector map[string]string
	Affinity     *corev1.Affinity
	Tolerations  []corev1.Toleration
}

// PVC is the member's claim.
type PVC struct {
	Name         string
	UID          string
	Phase        string
	VolumeName   string
	StorageClass string
	// Request is the requested size, as a Kubernetes quantity string.
	Request  string
	Deleting bool
	// SelectedNode is the volume.kubernetes.io/selected-node annotation.
	SelectedNode string
}

// PV is the volume bound to the member's claim.
type PV struct {
	Name          string
	UID           string
	Phase         string
	ReclaimPolicy string
	// Node is the node the volume's node affinity pins it to, "" if none.
	Node string
}

// Alarm is an active etcd alarm.
type Alarm struct {
	MemberID uint64
	// Type is "NOSPACE" or "CORRUPT".
	Type string
}

// Node is a Kubernetes node.
type Node struct {
	Name          string
	Ready         bool
	Unschedulable bool
	// Labels are the node's labels (its zone is
	// topology.kubernetes.io/zone); Taints its taints.
	Labels map[string]string
	Taints []corev1.Taint
}

// zone returns the node's topology.kubernetes.io/zone label, "" if none.
func (n Node) zone() string { return n.Labels[corev1.LabelTopologyZone] }

// Workload is what owns the members' pods.
type Workload struct {
	// Kind is "StatefulSet" or "EtcdCluster".
	Kind string
	Name string
	// Replicas is the desired member count; ReadyReplicas how many are
	// ready.
	Replicas      int
	ReadyReplicas int
	// CurrentRevision and UpdateRevision differ while a StatefulSet rolls
	// out.
	CurrentRevision string
	UpdateRevision  string
	// ServiceName is the headless Service giving members their DNS names.
	ServiceName string
	// InitialClusterState is ETCD_INITIAL_CLUSTER_STATE from the aenix
	// etcd-cluster-state ConfigMap ("" if absent).
	InitialClusterState string
	// Progressing reports an EtcdCluster with Progressing=True, i.e. the
	// operator is still acting on an earlier change.
	Progressing bool
	// Operator is the v1alpha2 operator's state (EtcdCluster only; nil
	// when not read, and then not checked).
	Operator *OperatorState
}

// PDB is a PodDisruptionBudget covering the members.
type PDB struct {
	Name               string
	DisruptionsAllowed int
	CurrentHealthy     int
	DesiredHealthy     int
}

// Certificate is a parsed serving or peer certificate.
type Certificate struct {
	// Secret is where it came from.
	Secret   string
	DNSNames []string
	NotAfter time.Time
	// ServerAuth and ClientAuth report its extended key usages (peer
	// certificates need both).
	ServerAuth bool
	ClientAuth bool
}

// started reports whether the member has started at least once (etcd then
// knows its name).
func (m Member) started() bool { return m.Name != "" }

// Voter reports whether the member votes.
func (m Member) Voter() bool { return !m.IsLearner }

// Healthy reports whether the member answered Status without errors.
func (m Member) Healthy() bool { return m.Status != nil && len(m.Status.Errors) == 0 }

// PeerURL returns the member's first peer URL, "" if none.
func (m Member) PeerURL() string {
	if len(m.PeerURLs) == 0 {
		return ""
	}
	return m.PeerURLs[0]
}

// Node returns the node the member's pod runs on, else the node its volume
// is pinned to, else "".
func (m Member) Node() string {
	switch {
	case m.Pod != nil && m.Pod.Node != "":
		return m.Pod.Node
	case m.PV != nil:
		return m.PV.Node
	}
	return ""
}

// Label returns a short human name: the pod name when known, else the etcd
// name, else the hex ID.
func (m Member) Label() string {
	switch {
	case m.Pod != nil:
		return m.Pod.Name
	case m.EtcdMember != "":
		return m.EtcdMember
	case m.Name != "":
		return m.Name
	}
	return FormatID(m.ID)
}

// FormatID formats a member ID the way etcdctl does (lower-case hex).
func FormatID(id uint64) string { return fmt.Sprintf("%x", id) }

// Voters returns the voting members.
func (s *State) Voters() []Member {
	var v []Member
	for _, m := range s.Members {
		if m.Voter() {
			v = append(v, m)
		}
	}
	return v
}

// Learners returns the learners.
func (s *State) Learners() []Member {
	var l []Member
	for _, m := range s.Members {
		if m.IsLearner {
			l = append(l, m)
		}
	}
	return l
}

// Leader returns the ID of the leader if every member that answered agrees
// on one, else 0.
func (s *State) Leader() uint64 {
	var leader uint64
	for _, m := range s.Members {
		if m.Status == nil {
			continue
		}
		if m.Status.Leader == 0 || (leader != 0 && leader != m.Status.Leader) {
			return 0
		}
		leader = m.Status.Leader
	}
	return leader
}

// clusterID returns the cluster ID if every member that answered agrees on
// one, else 0.
func (s *State) clusterID() uint64 {
	var id uint64
	for _, m := range s.Members {
		if m.Status == nil {
			continue
		}
		if id != 0 && id != m.Status.ClusterID {
			return 0
		}
		id = m.Status.ClusterID
	}
	return id
}

// MemberByID returns the member with the ID, or nil.
func (s *State) MemberByID(id uint64) *Member {
	for i := range s.Members {
		if s.Members[i].ID == id {
			return &s.Members[i]
		}
	}
	return nil
}

// memberByPeerURL returns the member with the peer URL, or nil.
func (s *State) memberByPeerURL(u string) *Member {
	for i := range s.Members {
		for _, p := range s.Members[i].PeerURLs {
			if sameURL(p, u) {
				return &s.Members[i]
			}
		}
	}
	return nil
}

// Node returns the named node, or nil.
func (s *State) Node(name string) *Node { return nodeNamed(s.Nodes, name) }

// nodeNamed returns the node of that name in nodes, or nil.
func nodeNamed(nodes []Node, name string) *Node {
	for i := range nodes {
		if nodes[i].Name == name {
			return &nodes[i]
		}
	}
	return nil
}

// FindMember resolves what a user calls a member: a pod name, an EtcdMember
// name, an etcd member name or a hex member ID. It returns nil if nothing
// matches.
func (s *State) FindMember(ref string) *Member {
	for i := range s.Members {
		m := &s.Members[i]
		if (m.Pod != nil && m.Pod.Name == ref) || (m.EtcdMember != "" && m.EtcdMember == ref) {
			return m
		}
	}
	for i := range s.Members {
		if m := &s.Members[i]; m.Name == ref || FormatID(m.ID) == ref {
			return m
		}
	}
	return nil
}

// sortMembers orders members by label, then ID, for stable output.
func sortMembers(ms []Member) {
	sort.Slice(ms, func(i, j int) bool {
		if ms[i].Label() != ms[j].Label() {
			return ms[i].Label() < ms[j].Label()
		}
		return ms[i].ID < ms[j].ID
	})
}
