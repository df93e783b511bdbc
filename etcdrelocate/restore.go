package etcdrelocate

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// StepClearMember is the first change of a restore plan: it deletes the pod
// and claim a failed attempt left under the member's names (held, by UID),
// so that the restored member starts on a fresh claim on the chosen node.
const StepClearMember StepKind = "clear-member"

// RestoreRequest asks to add back, on Node, the replica that a rolled-back
// relocation left missing (the StatefulSet layout; in the v1alpha2 layouts
// the operator refills its members itself).
type RestoreRequest struct {
	// Namespace is the tenant namespace holding the etcd.
	Namespace string
	// Cluster is the StatefulSet name. Default "etcd".
	Cluster string
	// Node is the node to run the restored member on: Ready, schedulable,
	// running no member of the cluster. Empty resumes an interrupted
	// restore on the node it chose.
	Node string
	// Options tune the plan (SnapshotDir, SkipSnapshot, MaxIndexLag ...).
	Options Options
}

// RestoreReplica adds back the replica a rolled-back relocation left
// missing (see *RolledBackError), on req.Node: under the relocation Lease it
// deletes what the failed attempt left of the member's pod and claim, adds a
// learner with the member's peer URL, creates its claim pinned to the node,
// waits for the pod, lets it catch up, promotes it, verifies the cluster
// (as many voters as before the relocation, HashKV equal), lets the old
// member's retained volume go and deletes the checkpoint. It is resumable
// like Execute (run it again after an interruption) and rolls back the same
// way if the new member does not start or catch up in time. PlanRestore
// shows the plan without changing anything.
func (r *Relocator) RestoreReplica(ctx context.Context, req RestoreRequest) (*Result, error) {
	p, err := r.PlanRestore(ctx, req)
	if err != nil {
		return &Result{}, err
	}
	return r.Execute(ctx, p)
}

// PlanRestore observes the cluster and returns the plan RestoreReplica
// carries out; see RestorePlanFor.
func (r *Relocator) PlanRestore(ctx context.Context, req RestoreRequest) (*Plan, error) {
	if req.Cluster == "" {
		req.Cluster = DefaultCluster
	}
	s, err := r.Observe(ctx, req.Namespace, req.Cluster)
	if err != nil {
		return nil, err
	}
	return RestorePlanFor(s, req)
}

// RestorePlanFor makes the restore plan from an observed state without
// I/O. It returns ErrNothingToRestore without a rolled-back (or
// interrupted restoring) checkpoint, and a *PreflightError when the node is
// unusable or the remaining members are not all healthy voters.
func RestorePlanFor(s *State, req RestoreRequest) (*Plan, error) {
	if s == nil {
		return nil, errNil("*State")
	}
	cp := s.Checkpoint
	switch {
	case cp == nil:
		return nil, fmt.Errorf("%w in %s/%s", ErrNothingToRestore, s.Namespace, s.Cluster)
	case cp.Phase == PhaseRunning:
		return nil, fmt.Errorf("%w: a relocation of %s is in progress in %s/%s; resume it (Plan, Execute)", ErrNothingToRestore, cp.Pod, s.Namespace, s.Cluster)
	case cp.Layout != LayoutStatefulSet:
		return nil, fmt.Errorf("%w: layout %s (its operator re-adds members)", ErrNothingToRestore, cp.Layout)
	}
	node := req.Node
	if node == "" && cp.Phase == PhaseRestoring {
		node = cp.TargetNode
	}
	if cp.Phase == PhaseRestoring && node != cp.TargetNode {
		return nil, fmt.Errorf("%w: a restore of %s to %s is in progress; run it again without a node, or with that one", ErrRelocationInProgress, cp.Pod, cp.TargetNode)
	}
	if err := restorePreflight(s, cp, node); err != nil {
		return nil, err
	}
	pv := cp.RetainedVolume
	if pv == "" {
		pv = cp.PV
	}
	p := &Plan{Namespace: s.Namespace, Cluster: s.Cluster, Layout: cp.Layout, TargetNode: node, ClusterID: cp.ClusterID, Voters: cp.Voters,
		Options: req.Options, Restore: true, Resume: cp.Phase == PhaseRestoring,
		Member: MemberRef{ID: cp.MemberID, PeerURL: cp.PeerURL, Pod: cp.Pod, PodUID: cp.PodUID, PVC: cp.PVC, PVCUID: cp.PVCUID, PV: pv, Node: cp.SourceNode}}
	if p.Options.SnapshotDir == "" {
		p.Options.SnapshotDir = cp.Options.SnapshotDir
	}
	for _, m := range s.Members {
		p.Peers = append(p.Peers, m.ID)
	}
	p.buildRestore()
	return p, nil
}

// restorePreflight checks the node and the remaining members.
func restorePreflight(s *State, cp *Checkpoint, node string) error {
	var fails []Failure
	fail := func(check string, sentinel error, format string, args ...any) {
		fails = append(fails, Failure{Check: check, Err: fmt.Errorf("%w: "+format, append([]any{sentinel}, args...)...)})
	}
	n := s.Node(node)
	switch {
	case node == "":
		fail("target-node", ErrTargetNode, "no node given")
	case n == nil:
		fail("target-node", ErrTargetNode, "node %q does not exist", node)
	case !n.Ready:
		fail("target-node", ErrTargetNode, "node %s is not Ready", node)
	case n.Unschedulable:
		fail("target-node", ErrTargetNode, "node %s is cordoned", node)
	}
	for _, m := range s.Members {
		if m.Node() == node && !sameURL(m.PeerURL(), cp.PeerURL) {
			fail("target-node", ErrTargetHasReplica, "node %s already runs member %s", node, m.Label())
		}
		if m.ID == cp.MemberID {
			fail("members", ErrUnexpectedMember, "the removed member %s is back", FormatID(cp.MemberID))
		}
	}
	voters := s.Voters()
	if cp.Phase == PhaseRolledBack && len(voters) != cp.Voters-1 {
		fail("voters", ErrUnexpectedMember, "%d voters; the rolled-back relocation left %d", len(voters), cp.Voters-1)
	}
	for _, l := range s.Learners() {
		if cp.Phase != PhaseRestoring || !sameURL(l.PeerURL(), cp.PeerURL) {
			fail("learners", ErrLearnerPresent, "member %s (%s) is a learner", l.Label(), FormatID(l.ID))
		}
	}
	for _, m := range voters {
		if m.Status == nil && !sameURL(m.PeerURL(), cp.PeerURL) {
			fail("members", ErrMemberDown, "voter %s (%s) does not answer: %s", m.Label(), FormatID(m.ID), m.StatusError)
		}
	}
	if s.Leader() == 0 {
		fail("leader", ErrNoLeader, "members report no leader or different leaders")
	}
	if len(fails) > 0 {
		return &PreflightError{Failures: fails}
	}
	return nil
}

// buildRestore fills in the restore plan's steps.
func (p *Plan) buildRestore() {
	m := p.Member
	before := Membership{Voters: p.Voters - 1, Healthy: p.Voters - 1}
	p.MinFaultTolerance = p.addSteps(before)
	p.Guarantee = fmt.Sprintf("restores the replica %s lost by a rolled-back relocation: it joins as a learner and votes only once caught up; "+
		"fault tolerance stays %d until the promotion, then %d. On a pod or catch-up timeout the learner is removed again and the cluster keeps %d voters",
		m.label(), before.FaultTolerance(), Membership{Voters: p.Voters, Healthy: p.Voters}.FaultTolerance(), p.Voters-1)
}

// restoreCheckpoint is the checkpoint step of a restore plan: it turns the
// rolled-back checkpoint into a restoring one on the plan's node (with the
// revision to verify the keys at), or finds the restore already recorded.
func restoreCheckpoint(ctx context.Context, x *run) (string, bool, error) {
	name := checkpointName(x.p.Cluster)
	cm, err := x.r.cfg.Kube.CoreV1().ConfigMaps(x.p.Namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", false, fmt.Errorf("%w: checkpoint %s/%s is gone; nothing to restore", ErrPlanStale, x.p.Namespace, name)
	}
	if err != nil {
		return "", false, fmt.Errorf("get checkpoint: %w", err)
	}
	cp, err := DecodeCheckpoint([]byte(cm.Data[checkpointKey]))
	if err != nil {
		return "", false, fmt.Errorf("configmap %s: %w", name, err)
	}
	if cp.MemberID != x.p.Member.ID {
		return "", false, fmt.Errorf("%w: checkpoint %s/%s records member %s", ErrPlanStale, x.p.Namespace, name, FormatID(cp.MemberID))
	}
	x.cp, x.cpCM = cp, cm
	switch cp.Phase {
	case PhaseRestoring:
		if cp.TargetNode != x.p.TargetNode {
			return "", false, fmt.Errorf("%w: a restore to %s is recorded", ErrRelocationInProgress, cp.TargetNode)
		}
		return "restore to " + cp.TargetNode + " recorded; resuming", true, nil
	case PhaseRolledBack:
	default:
		return "", false, fmt.Errorf("%w: checkpoint %s/%s is in phase %s", ErrPlanStale, x.p.Namespace, name, cp.Phase)
	}
	cp.Phase, cp.TargetNode = PhaseRestoring, x.p.TargetNode
	if rev, err := x.revision(ctx); err == nil {
		cp.Revision = rev
	}
	if err := x.saveCheckpoint(ctx); err != nil {
		return "", false, err
	}
	return "checkpoint " + name + " marked restoring on " + x.p.TargetNode, false, nil
}
