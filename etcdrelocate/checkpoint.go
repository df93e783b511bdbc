package etcdrelocate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Checkpoint is what a relocation records in the cluster before it changes
// anything: the facts a re-run needs to work out where it stopped from etcd
// and Kubernetes state (the old member's ID and peer URL, the old pod and
// claim UIDs, the target node). It is stored as JSON in the ConfigMap
// <cluster>-relocate: one relocation per cluster at a time. Every write
// after the first is conditional on the resourceVersion the run read or
// wrote last, and the run holds the Lease of the same name meanwhile (see
// Execute).
type Checkpoint struct {
	// Version is the format version, 1.
	Version int `json:"version"`
	// Namespace and Cluster name the tenant etcd.
	Namespace string `json:"namespace"`
	Cluster   string `json:"cluster"`
	// Layout is the layout the plan was made for.
	Layout Layout `json:"layout"`
	// ClusterID is etcd's cluster ID (split-brain guard on resume).
	ClusterID uint64 `json:"-"`
	// MemberID and PeerURL identify the member being moved.
	MemberID uint64 `json:"-"`
	PeerURL  string `json:"peerURL"`
	// Voters is the number of voters before the move.
	Voters int `json:"voters"`
	// Peers are the IDs of the other members at the start.
	Peers []uint64 `json:"-"`
	// Pod, PodUID, PVC, PVCUID and PV are the old member's objects.
	Pod    string `json:"pod,omitempty"`
	PodUID string `json:"podUID,omitempty"`
	PVC    string `json:"pvc,omitempty"`
	PVCUID string `json:"pvcUID,omitempty"`
	PV     string `json:"pv,omitempty"`
	// EtcdMember is the old v1alpha2 EtcdMember object.
	EtcdMember string `json:"etcdMember,omitempty"`
	// SourceNode and TargetNode are where the member moves from and to.
	SourceNode string `json:"sourceNode"`
	TargetNode string `json:"targetNode"`
	// CordonedSource is true when this relocation cordoned the source node
	// (so it uncordons it afterwards).
	CordonedSource bool `json:"cordonedSource,omitempty"`
	// Revision is the cluster's revision when the relocation began: Verify
	// checks that every member holds the same keys at it.
	Revision int64 `json:"revision,omitempty"`
	// PinnedPlacement is true once this relocation pinned the EtcdCluster's
	// affinity to the target; OriginalAffinity is the affinity it replaced
	// (JSON, "" for none).
	PinnedPlacement  bool   `json:"pinnedPlacement,omitempty"`
	OriginalAffinity string `json:"originalAffinity,omitempty"`
	// SnapshotPath is where the snapshot went, "" if none was taken.
	// SnapshotBytes and SnapshotSHA256 (hex) are the file's size and the
	// SHA-256 of its content when it verified: a resumed run relies on the
	// file only while it still matches them, and takes the snapshot again
	// otherwise.
	SnapshotPath   string `json:"snapshotPath,omitempty"`
	SnapshotBytes  int64  `json:"snapshotBytes,omitempty"`
	SnapshotSHA256 string `json:"snapshotSHA256,omitempty"`
	// RetainedVolume is the old member's volume whose reclaim policy this
	// relocation set to Retain, so that its data outlives the old claim
	// until release-volume; "" if none.
	RetainedVolume string `json:"retainedVolume,omitempty"`
	// Options are the request's options.
	Options Options `json:"options"`
	// Phase is "running", "rolled-back" or "restoring".
	Phase string `json:"phase"`
	// Started is when the relocation began.
	Started time.Time `json:"started"`
}

// Checkpoint phases.
const (
	PhaseRunning    = "running"
	PhaseRolledBack = "rolled-back"
	// PhaseRestoring: RestoreReplica is adding the missing replica back
	// (TargetNode is the node it restores on); run it again to resume.
	PhaseRestoring = "restoring"
)

// checkpointJSON carries the IDs as hex strings, as etcdctl prints them.
type checkpointJSON struct {
	Checkpoint
	ClusterID string   `json:"clusterID"`
	MemberID  string   `json:"memberID"`
	Peers     []string `json:"peers,omitempty"`
}

// Encode returns the checkpoint as indented JSON.
func (c *Checkpoint) Encode() ([]byte, error) {
	if c == nil {
		return nil, errNil("*Checkpoint")
	}
	cj := checkpointJSON{Checkpoint: *c, ClusterID: FormatID(c.ClusterID), MemberID: FormatID(c.MemberID)}
	for _, id := range c.Peers {
		cj.Peers = append(cj.Peers, FormatID(id))
	}
	return json.MarshalIndent(cj, "", "  ")
}

// DecodeCheckpoint parses and validates a checkpoint written by Encode. It
// returns an error wrapping ErrInvalidCheckpoint for anything else.
func DecodeCheckpoint(data []byte) (*Checkpoint, error) {
	var cj checkpointJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cj); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidCheckpoint, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: trailing data", ErrInvalidCheckpoint)
	}
	c := cj.Checkpoint
	var err error
	if c.MemberID, err = strconv.ParseUint(cj.MemberID, 16, 64); err != nil || c.MemberID == 0 {
		return nil, fmt.Errorf("%w: memberID %q is not a non-zero hex ID", ErrInvalidCheckpoint, cj.MemberID)
	}
	if c.ClusterID, err = strconv.ParseUint(cj.ClusterID, 16, 64); err != nil {
		return nil, fmt.Errorf("%w: clusterID %q is not a hex ID", ErrInvalidCheckpoint, cj.ClusterID)
	}
	for _, p := range cj.Peers {
		id, err := strconv.ParseUint(p, 16, 64)
		if err != nil || id == 0 {
			return nil, fmt.Errorf("%w: peer %q is not a non-zero hex ID", ErrInvalidCheckpoint, p)
		}
		c.Peers = append(c.Peers, id)
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

func (c *Checkpoint) validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrInvalidCheckpoint}, args...)...)
	}
	switch {
	case c.Version != 1:
		return bad("version %d (want 1)", c.Version)
	case c.Namespace == "" || c.Cluster == "":
		return bad("namespace and cluster are required")
	case c.Layout <= LayoutUnknown || c.Layout > LayoutMigrated:
		return bad("unknown layout %d", c.Layout)
	case c.TargetNode == "":
		return bad("targetNode is required")
	case c.Voters < 3:
		return bad("voters %d (a relocation starts from 3 or more)", c.Voters)
	case c.Phase != PhaseRunning && c.Phase != PhaseRolledBack && c.Phase != PhaseRestoring:
		return bad("phase %q", c.Phase)
	case c.Layout == LayoutStatefulSet && (c.Pod == "" || c.PVC == ""):
		return bad("pod and pvc are required for the StatefulSet layout")
	case c.Layout != LayoutStatefulSet && c.EtcdMember == "":
		return bad("etcdMember is required for the v1alpha2 layouts")
	}
	u, err := url.Parse(c.PeerURL)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return bad("peerURL %q is not an http(s) URL", c.PeerURL)
	}
	return nil
}

// checkpointName is the ConfigMap holding a cluster's checkpoint.
func checkpointName(cluster string) string { return cluster + "-relocate" }

// checkpointKey is the ConfigMap key holding the JSON.
const checkpointKey = "checkpoint.json"

// CheckpointFor returns the checkpoint that records plan p (phase running,
// Started unset; the executor stamps it when it writes the checkpoint), or
// nil for a nil plan.
func CheckpointFor(p *Plan) *Checkpoint {
	if p == nil {
		return nil
	}
	m := p.Member
	return &Checkpoint{
		Version: 1, Namespace: p.Namespace, Cluster: p.Cluster, Layout: p.Layout, ClusterID: p.ClusterID,
		MemberID: m.ID, PeerURL: m.PeerURL, Voters: p.Voters, Pod: m.Pod, PodUID: m.PodUID, PVC: m.PVC, PVCUID: m.PVCUID,
		PV: m.PV, EtcdMember: m.EtcdMember, Peers: p.Peers, SourceNode: m.Node, TargetNode: p.TargetNode, Options: p.Options, Phase: PhaseRunning,
	}
}

// ownCheckpoint decides whether the run may continue the relocation a
// checkpoint found in the cluster records: a plan that resumes it (same
// member and target, still running), or the checkpoint this run created
// itself (an ambiguous Create). A fresh plan that finds another run's
// checkpoint was made before that run started: it is stale.
func (x *run) ownCheckpoint(cp *Checkpoint) error {
	name := x.p.Namespace + "/" + checkpointName(x.p.Cluster)
	switch {
	case cp.MemberID != x.p.Member.ID || !sameURL(cp.PeerURL, x.p.Member.PeerURL):
		return fmt.Errorf("%w: ConfigMap %s records member %s", ErrRelocationInProgress, name, FormatID(cp.MemberID))
	case cp.TargetNode != x.p.TargetNode:
		return fmt.Errorf("%w: ConfigMap %s records a move of this member to %s", ErrRelocationInProgress, name, cp.TargetNode)
	case cp.Phase != PhaseRunning:
		return fmt.Errorf("%w: ConfigMap %s is in phase %s", ErrPlanStale, name, cp.Phase)
	case !x.p.Resume && (x.cpStamp.IsZero() || !cp.Started.Equal(x.cpStamp)):
		return fmt.Errorf("%w: ConfigMap %s records a relocation started %s by another run after this plan was made; plan again to resume it",
			ErrPlanStale, name, cp.Started.Format(time.RFC3339))
	}
	return nil
}

// saveCheckpoint writes x.cp back, conditional on the resourceVersion the
// run read or wrote last. A conflict is the run's own earlier write whose
// answer was lost (the stored checkpoint is what it wrote), or someone
// else's: then the run stops (ErrLeaseLost).
func (x *run) saveCheckpoint(ctx context.Context) error {
	data, err := x.cp.Encode()
	if err != nil {
		return err
	}
	cms := x.r.cfg.Kube.CoreV1().ConfigMaps(x.p.Namespace)
	name := checkpointName(x.p.Cluster)
	if x.cpCM == nil {
		cm, err := cms.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("update checkpoint: %w", err)
		}
		cur, err := DecodeCheckpoint([]byte(cm.Data[checkpointKey]))
		if err != nil || cur.MemberID != x.cp.MemberID {
			return fmt.Errorf("%w: checkpoint %s/%s no longer records member %s", ErrLeaseLost, x.p.Namespace, name, FormatID(x.cp.MemberID))
		}
		x.cpCM = cm
	}
	cm := x.cpCM.DeepCopy()
	cm.Data = map[string]string{checkpointKey: string(data)}
	got, err := cms.Update(ctx, cm, metav1.UpdateOptions{})
	if err == nil {
		x.cpCM = got
		return nil
	}
	if !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
		return fmt.Errorf("update checkpoint: %w", err)
	}
	cur, gerr := cms.Get(ctx, name, metav1.GetOptions{})
	if gerr == nil && cur.Data[checkpointKey] == string(data) {
		x.cpCM = cur
		return nil
	}
	return fmt.Errorf("%w: checkpoint %s/%s was changed or deleted by someone else: %w", ErrLeaseLost, x.p.Namespace, name, err)
}

// current checks, once the run holds the lease, that a fresh plan still
// matches the cluster: the member is a voter, no member joined since, and
// its pod is the one planned. (A resumed plan is checked against its
// checkpoint by the checkpoint step.)
func (x *run) current(ctx context.Context) error {
	if x.p.Resume || x.p.Restore {
		return nil
	}
	ms, err := x.mem.list(ctx)
	if err != nil {
		return err
	}
	if m := byID(ms, x.p.Member.ID); m == nil || m.IsLearner {
		return fmt.Errorf("%w: member %s is no longer a voter (another run moved it?)", ErrPlanStale, FormatID(x.p.Member.ID))
	}
	for _, m := range ms {
		if m.ID != x.p.Member.ID && !slices.Contains(x.p.Peers, m.ID) {
			return fmt.Errorf("%w: member %s joined after the plan was made", ErrPlanStale, FormatID(m.ID))
		}
	}
	if x.p.Member.Pod == "" || x.p.Member.PodUID == "" {
		return nil
	}
	pod, err := x.r.cfg.Kube.CoreV1().Pods(x.p.Namespace).Get(ctx, x.p.Member.Pod, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Errorf("%w: pod %s is gone", ErrPlanStale, x.p.Member.Pod)
	case err != nil:
		return fmt.Errorf("get pod %s: %w", x.p.Member.Pod, err)
	case string(pod.UID) != x.p.Member.PodUID:
		return fmt.Errorf("%w: pod %s was replaced after the plan was made", ErrPlanStale, x.p.Member.Pod)
	}
	return nil
}
