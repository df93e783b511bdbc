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

// build fills in the steps, the guarantee and the minimum fault tolerance.
func (p *Plan) build() {
	m := p.Member
	before := Membership{Voters: p.Voters, Healthy: p.Voters}
	p.MinFaultTolerance = p.addSteps(before)
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
