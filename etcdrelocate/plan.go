package etcdrelocate

import (
	"errors"
	"fmt"
	"strings"
)

// StepKind names a step of a plan.
type StepKind string

// The steps. A StatefulSet plan uses checkpoint … finish in the order of the
// package documentation; a v1alpha2 plan replaces stop-member … promote
// with pin-placement, delete-etcdmember, wait-replacement and wait-voter,
// and has no release-volume. Each is declared once, with its effect on the
// membership, its body and its rollback, in stepTable (steptable.go);
// docs/etcdrelocate.md's table of steps is drawn from it.
const (
	StepCheckpoint       StepKind = "checkpoint"
	StepSnapshot         StepKind = "snapshot"
	StepMoveLeader       StepKind = "move-leader"
	StepCordon           StepKind = "cordon"
	StepPinPlacement     StepKind = "pin-placement"
	StepRemoveMember     StepKind = "remove-member"
	StepStopMember       StepKind = "stop-member"
	StepAddLearner       StepKind = "add-learner"
	StepClaimOnTarget    StepKind = "claim-on-target"
	StepWaitPod          StepKind = "wait-pod"
	StepCatchUp          StepKind = "catch-up"
	StepPromote          StepKind = "promote"
	StepDeleteEtcdMember StepKind = "delete-etcdmember"
	StepWaitReplacement  StepKind = "wait-replacement"
	StepWaitVoter        StepKind = "wait-voter"
	StepVerify           StepKind = "verify"
	StepReleaseVolume    StepKind = "release-volume"
	StepUncordon         StepKind = "uncordon"
	StepUnpinPlacement   StepKind = "unpin-placement"
	StepFinish           StepKind = "finish"
)

// Step is one step of a plan: what it does, what must hold before, how the
// executor checks that it worked, and the membership it leaves.
type Step struct {
	Kind         StepKind
	Action       string
	Precondition string
	Check        string
	// After is the membership the step leaves when it succeeds.
	After Membership
}

// MemberRef identifies the member being moved by everything a re-run needs.
type MemberRef struct {
	ID         uint64
	Name       string
	PeerURL    string
	Pod        string
	PodUID     string
	PVC        string
	PVCUID     string
	PV         string
	EtcdMember string
	// Node is the node it runs on before the move.
	Node string
	// Leader reports whether it led the cluster when the plan was made.
	Leader bool
}

// Plan is a relocation as a plain value: print it for a dry run, hand it to
// Execute to carry it out.
type Plan struct {
	Namespace  string
	Cluster    string
	Layout     Layout
	Member     MemberRef
	TargetNode string
	// ClusterID is etcd's cluster ID when the plan was made.
	ClusterID uint64
	// Voters is the number of voters before the move.
	Voters int
	// Peers are the IDs of the other members when the plan was made; a
	// member outside Peers and the moved member is the replacement.
	Peers []uint64
	// Steps are the steps in order.
	Steps []Step
	// Guarantee states what the plan guarantees about quorum and fault
	// tolerance.
	Guarantee string
	// MinFaultTolerance is the lowest fault tolerance any step leaves.
	MinFaultTolerance int
	// Warnings are preflight findings that did not refuse the plan.
	Warnings []string
	// Options are the request's options.
	Options Options
	// Resume is true when the plan continues a relocation recorded in a
	// checkpoint; Execute then skips the steps already done.
	Resume bool
	// Restore is true for a plan of RestoreReplica: it adds back, on
	// TargetNode, the replica a rolled-back relocation left missing.
	Restore bool
}

// PlanFor makes the plan for req from the observed state s. It does no I/O.
// If s holds the checkpoint of a relocation of the same member, the plan
// resumes it; otherwise preflight runs first and its *PreflightError is
// returned on refusal.
func PlanFor(s *State, req Request) (*Plan, error) {
	if s == nil {
		return nil, errNil("*State")
	}
	if cp := s.Checkpoint; cp != nil && checkpointMatches(s, cp, req) {
		return resumePlan(s, cp)
	}
	target, warns, err := preflight(s, req)
	if err != nil {
		return nil, err
	}
	p := &Plan{
		Namespace:  s.Namespace,
		Cluster:    s.Cluster,
		Layout:     s.Layout,
		TargetNode: req.TargetNode,
		ClusterID:  s.clusterID(),
		Voters:     len(s.Voters()),
		Warnings:   warns,
		Options:    req.Options,
		Member:     refOf(target, s.Leader() == target.ID),
	}
	for _, m := range s.Members {
		if m.ID != target.ID {
			p.Peers = append(p.Peers, m.ID)
		}
	}
	p.build()
	return p, nil
}

func refOf(m *Member, leader bool) MemberRef {
	r := MemberRef{ID: m.ID, Name: m.Name, PeerURL: m.PeerURL(), EtcdMember: m.EtcdMember, Node: m.Node(), Leader: leader}
	if m.Pod != nil {
		r.Pod, r.PodUID = m.Pod.Name, m.Pod.UID
	}
	if m.PVC != nil {
		r.PVC, r.PVCUID = m.PVC.Name, m.PVC.UID
	}
	if m.PV != nil {
		r.PV = m.PV.Name
	}
	return r
}

// checkpointMatches reports whether a checkpoint records the relocation req
// asks for (an empty Member or TargetNode matches any).
func checkpointMatches(s *State, cp *Checkpoint, req Request) bool {
	if req.TargetNode != "" && req.TargetNode != cp.TargetNode {
		return false
	}
	switch req.Member {
	case "", cp.Pod, cp.EtcdMember, FormatID(cp.MemberID):
		return true
	}
	m := s.FindMember(req.Member)
	return m != nil && sameURL(m.PeerURL(), cp.PeerURL)
}

// resumePlan rebuilds the plan recorded in a checkpoint.
func resumePlan(s *State, cp *Checkpoint) (*Plan, error) {
	if cp.Phase != PhaseRunning {
		cause := errors.New("an earlier run rolled back")
		if cp.Phase == PhaseRestoring {
			cause = fmt.Errorf("a restore of the replica on %s was interrupted", cp.TargetNode)
		}
		return nil, &RolledBackError{Namespace: cp.Namespace, Cluster: cp.Cluster, Step: StepFinish, Voters: cp.Voters - 1, RemovedID: cp.MemberID,
			SnapshotPath: cp.SnapshotPath, Volume: cp.RetainedVolume, Cause: cause}
	}
	p := &Plan{
		Namespace:  cp.Namespace,
		Cluster:    cp.Cluster,
		Layout:     cp.Layout,
		TargetNode: cp.TargetNode,
		ClusterID:  cp.ClusterID,
		Voters:     cp.Voters,
		Options:    cp.Options,
		Resume:     true,
		Peers:      cp.Peers,
		Member: MemberRef{ID: cp.MemberID, PeerURL: cp.PeerURL, Pod: cp.Pod, PodUID: cp.PodUID, PVC: cp.PVC, PVCUID: cp.PVCUID,
			PV: cp.PV, EtcdMember: cp.EtcdMember, Node: cp.SourceNode},
	}
	if m := s.MemberByID(cp.MemberID); m != nil {
		p.Member.Name = m.Name
		p.Member.Leader = s.Leader() == m.ID
	}
	p.build()
	return p, nil
}

// stepAdder returns the function that appends a step to p, its membership
// after the step worked out from the previous step's (from before for the
// first).
func (p *Plan) stepAdder(before Membership) addFunc {
	return func(kind StepKind, action, pre, check string) {
		prev := before
		if n := len(p.Steps); n > 0 {
			prev = p.Steps[n-1].After
		}
		after := prev.apply(stepDefs[kind].effect)
		p.Steps = append(p.Steps, Step{Kind: kind, After: after, Action: action, Precondition: pre, Check: check})
	}
}

// build fills in the steps, the guarantee and the minimum fault tolerance.
func (p *Plan) build() {
	m := p.Member
	before := Membership{Voters: p.Voters, Healthy: p.Voters}
	add := p.stepAdder(before)
	cm := p.Namespace + "/" + checkpointName(p.Cluster)
	add(StepCheckpoint, fmt.Sprintf("record member %s, its pod and claim UIDs and the target in ConfigMap %s", FormatID(m.ID), cm),
		"no other relocation recorded", "the ConfigMap reads back")
	lead := fmt.Sprintf("%s does not lead; keep it so", m.label())
	if m.Leader {
		lead = fmt.Sprintf("MoveLeader from %s to the most up-to-date other voter", m.label())
	}
	add(StepMoveLeader, lead, "the transferee is a healthy voter", fmt.Sprintf("two members agree the leader is not %s", m.label()))
	if !p.Options.SkipSnapshot {
		if p.snapshotFirst() {
			add(StepSnapshot, fmt.Sprintf("stream a snapshot from a healthy voter other than %s to %s", m.label(), p.snapshotDir()),
				"the source voter is healthy", "the snapshot is non-empty and its sha256 trailer verifies")
		} else {
			add(StepSnapshot, fmt.Sprintf("start streaming a snapshot from a healthy follower other than %s to %s; it streams while the member moves", m.label(), p.snapshotDir()),
				"the source voter is healthy", "release-volume deletes the old volume only after the snapshot's sha256 trailer verified")
		}
	}
	if !p.Options.SkipCordon && m.Node != "" {
		add(StepCordon, fmt.Sprintf("cordon %s so the new pod cannot land there again", m.Node),
			"none (a node cordoned before is left cordoned afterwards)", fmt.Sprintf("%s is unschedulable", m.Node))
	}
	if p.Layout.operatorManaged() {
		p.buildV1alpha2(add)
	} else {
		p.buildStatefulSet(add)
	}
	add(StepVerify, "check every member is a voter, one agreed leader, HashKV equal at a common revision, the pod Ready on "+p.TargetNode,
		"the new member is a voter", "all of the above")
	if !p.Layout.operatorManaged() {
		act := "delete the old volume, kept since stop-member (reclaim policy back to Delete, so its provisioner reclaims it)"
		if !p.Options.SkipSnapshot && !p.snapshotFirst() {
			act = "wait for the snapshot to verify (take it now if it failed), then " + act
		}
		add(StepReleaseVolume, act, "verify passed", "the snapshot is recorded; the old volume is gone or being reclaimed")
	}
	if p.Layout.operatorManaged() {
		add(StepUnpinPlacement, "restore EtcdCluster "+p.Cluster+"'s own affinity", "none", "the spec affinity equals the recorded original")
	}
	if !p.Options.SkipCordon && m.Node != "" {
		add(StepUncordon, fmt.Sprintf("uncordon %s (only if this relocation cordoned it)", m.Node), "none", m.Node+" is schedulable again")
	}
	add(StepFinish, "delete ConfigMap "+cm, "verify passed", "the ConfigMap is gone")
	p.MinFaultTolerance = before.FaultTolerance()
	for _, s := range p.Steps {
		p.MinFaultTolerance = min(p.MinFaultTolerance, s.After.FaultTolerance())
	}
	p.Guarantee = fmt.Sprintf("quorum is kept at every step; no member votes before it has caught up (it joins as a learner); "+
		"fault tolerance goes from %d to %d while the member is out (from stopping it to promoting its replacement), then back to %d. "+
		"On a pod or catch-up timeout the learner is removed again and the cluster keeps %d voters; the old member is never re-added",
		before.FaultTolerance(), p.MinFaultTolerance, before.FaultTolerance(), p.Voters-1)
	if !p.Layout.operatorManaged() && m.PV != "" {
		p.Guarantee += "; its data stays on volume " + m.PV + " until the replacement is verified"
		if !p.Options.SkipSnapshot {
			p.Guarantee += " and the snapshot has verified"
		}
	}
}

// addFunc appends a step of kind to a plan, in the plan's own words; its
// effect on the membership is stepTable's.
type addFunc func(kind StepKind, action, pre, check string)

func (p *Plan) buildStatefulSet(add addFunc) {
	m := p.Member
	add(StepStopMember,
		fmt.Sprintf("set the reclaim policy of the old volume to Retain, put a hold finalizer on PVC %s and delete it, then delete pod %s (etcd stops gracefully); the held claim keeps any new pod from starting", m.PVC, m.Pod),
		fmt.Sprintf("every other voter healthy; %s not the leader", m.label()),
		"the old pod is gone (by UID) and the old claim is deleted but held")
	add(StepRemoveMember,
		fmt.Sprintf("MemberRemove %s; retry \"unhealthy cluster\"; settle an ambiguous result by re-reading MemberList", FormatID(m.ID)),
		"the member is stopped; every other voter healthy",
		"the ID is gone from MemberList and the remaining voters agree on a leader")
	add(StepAddLearner,
		fmt.Sprintf("MemberAddAsLearner %s; retry \"unhealthy cluster\"; settle \"peer URL exists\" by MemberList", m.PeerURL),
		"no learner in the cluster; the old ID is absent", "MemberList shows the URL as a learner with a new ID")
	add(StepClaimOnTarget,
		fmt.Sprintf("release the old claim (its volume stays, Released) and create PVC %s pinned to %s (pre-bound to a local volume there, or annotated volume.kubernetes.io/selected-node)", m.PVC, p.TargetNode),
		"the old ID is out of etcd and the learner is registered", fmt.Sprintf("the claim exists and targets %s", p.TargetNode))
	add(StepWaitPod, fmt.Sprintf("wait for pod %s running on %s", m.Pod, p.TargetNode),
		"the learner is registered", "Status on the pod reports a learner with the new member ID and the same cluster ID")
	add(StepCatchUp, "wait until the learner has applied the leader's committed index",
		"the learner runs", "learner applied index ≥ leader committed index sampled when the wait began")
	add(StepPromote, "MemberPromote; retry while etcd answers \"not in sync\"; settle \"not a learner\" by MemberList",
		"the learner has caught up", "MemberList shows a voter and the member's own Status says it is not a learner")
}

func (p *Plan) buildV1alpha2(add addFunc) {
	m := p.Member
	add(StepPinPlacement,
		fmt.Sprintf("add a required node affinity for %s to EtcdCluster %s (restored afterwards)", p.TargetNode, p.Cluster),
		"the EtcdCluster is not progressing", "the operator has adopted the spec")
	add(StepDeleteEtcdMember,
		fmt.Sprintf("delete EtcdMember %s; the operator's finalizer runs MemberRemove, then its pod and claim are collected", m.EtcdMember),
		"every other voter healthy; the PodDisruptionBudget allows a disruption", "the member ID is gone from MemberList")
	add(StepWaitReplacement,
		fmt.Sprintf("wait for the operator's replacement EtcdMember to join as a learner on %s", p.TargetNode),
		"the old member is gone", "a new learner runs on "+p.TargetNode)
	add(StepWaitVoter, "wait for the operator to promote the replacement",
		"the replacement runs", "MemberList shows it as a voter")
}

func (m MemberRef) label() string {
	switch {
	case m.Pod != "":
		return m.Pod
	case m.EtcdMember != "":
		return m.EtcdMember
	case m.Name != "":
		return m.Name
	}
	return FormatID(m.ID)
}

// snapshotFirst reports whether the snapshot completes before anything
// changes (always in the operator-managed layouts).
func (p *Plan) snapshotFirst() bool { return p.Options.SnapshotFirst || p.Layout.operatorManaged() }

func (p *Plan) snapshotDir() string {
	if p.Options.SnapshotDir != "" {
		return p.Options.SnapshotDir
	}
	return "the temporary directory"
}

// String renders the plan as text: the header, the guarantee and a table of
// steps with their preconditions, checks and the fault tolerance each
// leaves.
func (p *Plan) String() string {
	if p == nil {
		return "<nil plan>"
	}
	var b strings.Builder
	if p.Restore {
		fmt.Fprintf(&b, "Restore %s (%s; removed member %s) of %s/%s on %s\n", p.Member.label(), p.Member.PeerURL, FormatID(p.Member.ID),
			p.Namespace, p.Cluster, p.TargetNode)
	} else {
		fmt.Fprintf(&b, "Relocate %s (member %s, %s) of %s/%s from %s to %s\n", p.Member.label(), FormatID(p.Member.ID), p.Member.PeerURL,
			p.Namespace, p.Cluster, orNone(p.Member.Node), p.TargetNode)
	}
	fmt.Fprintf(&b, "Layout: %s; %d voters", p.Layout, p.Voters)
	if p.Resume {
		b.WriteString("; resuming from the checkpoint")
	}
	fmt.Fprintf(&b, "\nGuarantee: %s.\n", p.Guarantee)
	for _, w := range p.Warnings {
		fmt.Fprintf(&b, "Warning: %s\n", w)
	}
	for i, s := range p.Steps {
		voters := fmt.Sprintf("%d voters", s.After.Voters)
		if s.After.Learners > 0 {
			voters += fmt.Sprintf(" + %d learner", s.After.Learners)
		}
		fmt.Fprintf(&b, "%2d. %-18s %s, fault tolerance %d\n", i+1, s.Kind, voters, s.After.FaultTolerance())
		fmt.Fprintf(&b, "    do:    %s\n    pre:   %s\n    check: %s\n", s.Action, s.Precondition, s.Check)
	}
	return b.String()
}

// Step returns the step of the given kind, or nil.
func (p *Plan) Step(kind StepKind) *Step {
	if p == nil {
		return nil
	}
	for i := range p.Steps {
		if p.Steps[i].Kind == kind {
			return &p.Steps[i]
		}
	}
	return nil
}
