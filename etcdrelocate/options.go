package etcdrelocate

import "time"

// Request asks to move one member to another node.
type Request struct {
	// Namespace is the tenant namespace holding the etcd.
	Namespace string
	// Cluster is the EtcdCluster (or StatefulSet) name. Default "etcd".
	Cluster string
	// Member names the member to move: its pod (etcd-1), its EtcdMember, its
	// etcd member name or its hex member ID.
	Member string
	// TargetNode is the node to move it to.
	TargetNode string
	// Options tune the checks and the plan; the zero value is the strict
	// default.
	Options Options
}

// Options tune preflight and the plan. The zero value is the strict,
// safe default.
type Options struct {
	// SkipVersionHazard turns the refusal of etcd 3.5.1–3.5.19 (learner
	// promotion saved in the v2 store only, etcd #19557) into a warning.
	// Upgrade to 3.5.26 or later before a 3.6 upgrade if you set it.
	SkipVersionHazard bool `json:"skipVersionHazard,omitempty"`
	// SkipSnapshot skips the snapshot taken before the member is removed.
	// Without it, a failure after removal leaves no rollback point of ours.
	SkipSnapshot bool `json:"skipSnapshot,omitempty"`
	// SnapshotFirst takes the snapshot before the member stops and waits
	// for it, so that streaming it does not load the cluster while it has
	// no fault tolerance; the move then takes longer by about the
	// snapshot's duration. By default (StatefulSet layout) the snapshot
	// streams while the member moves, and the old member's volume keeps its
	// data until the snapshot has verified. The v1alpha2 layouts always
	// take it first.
	SnapshotFirst bool `json:"snapshotFirst,omitempty"`
	// SnapshotDir is where the snapshot goes. Default: os.TempDir().
	SnapshotDir string `json:"snapshotDir,omitempty"`
	// SkipCordon leaves the source node schedulable. By default it is
	// cordoned for the move (and uncordoned after, unless it was cordoned
	// before) so that the new pod cannot land on it again.
	SkipCordon bool `json:"skipCordon,omitempty"`
	// MaxIndexLag is the largest difference of applied raft indexes between
	// voters that preflight accepts. Default 1000.
	MaxIndexLag uint64 `json:"maxIndexLag,omitempty"`
	// StallBudget is how long Execute waits for a member that stops
	// answering (a stopped or hung process, a starved node) before it
	// stops with a *StalledError; while it waits it reports the stall in
	// the progress events. Default 2 minutes.
	StallBudget time.Duration `json:"stallBudget,omitempty"`
}

func (o Options) maxIndexLag() uint64 {
	if o.MaxIndexLag == 0 {
		return 1000
	}
	return o.MaxIndexLag
}

func (r Request) cluster() string {
	if r.Cluster == "" {
		return DefaultCluster
	}
	return r.Cluster
}

// Timeouts bound the executor's waits. Zero fields take the defaults.
type Timeouts struct {
	// Membership bounds each membership change, including its retries of
	// "unhealthy cluster" and the settling of ambiguous results. Default
	// 2 minutes.
	Membership time.Duration
	// Pod bounds the wait for the new pod to run on the target node.
	// Default 5 minutes.
	Pod time.Duration
	// CatchUp bounds the learner's catch-up and promotion. Default 2
	// minutes plus one minute per 256 MiB of database.
	CatchUp time.Duration
	// Storage bounds the wait for the old pod and claim to disappear.
	// Default 3 minutes.
	Storage time.Duration
	// Call bounds each single RPC. Default 10 seconds.
	Call time.Duration
}

func (t Timeouts) withDefaults() Timeouts {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&t.Membership, 2*time.Minute)
	def(&t.Pod, 5*time.Minute)
	def(&t.Storage, 3*time.Minute)
	def(&t.Call, 10*time.Second)
	return t
}

// catchUp returns the catch-up bound for a database of dbSize bytes.
func (t Timeouts) catchUp(dbSize int64) time.Duration {
	if t.CatchUp > 0 {
		return t.CatchUp
	}
	return 2*time.Minute + time.Duration(dbSize/(256<<20))*time.Minute
}
