package etcdrelocate

import (
	"context"
	"fmt"
)

// step is one step of a relocation, declared in a file of its own
// (step_*.go): what it does (the table of steps in docs/etcdrelocate.md is
// drawn from it), its effect on etcd's membership (from which a plan works
// out the fault tolerance each step leaves), whether a timeout in it rolls
// the new member back, its words in a plan, and its body. Adding a step is
// one file and one line in stepTable.
type step interface {
	// Info declares the step.
	Info() stepInfo
	// Text is the step in plan p's words; ok is false where p leaves the
	// step out.
	Text(p *Plan) (t stepText, ok bool)
	// Run carries the step out. It works out first whether its work is
	// already done (so a re-run resumes) and reports what it did and
	// whether it skipped.
	Run(ctx context.Context, x *run) (msg string, skipped bool, err error)
}

// stepInfo is what a step declares about itself.
type stepInfo struct {
	kind   StepKind
	does   string
	effect effect
	// rollsBack: a timeout of the new member here removes its learner
	// again (StatefulSet layout; the operator owns v1alpha2 membership).
	rollsBack bool
}

// stepText is a step in a plan's words (Step's Action, Precondition and
// Check).
type stepText struct{ action, pre, check string }

// stepTable lists every step, in the order a plan holds them. A plan holds
// those whose Text includes them (Plan.build); the executor runs and rolls
// back by this table alone.
var stepTable = []step{
	checkpointStep{},
	clearMemberStep{},
	moveLeaderStep{},
	snapshotStep{},
	cordonStep{},
	pinPlacementStep{},
	stopMemberStep{},
	removeMemberStep{},
	deleteEtcdMemberStep{},
	addLearnerStep{},
	claimOnTargetStep{},
	waitPodStep{},
	catchUpStep{},
	promoteStep{},
	waitReplacementStep{},
	waitVoterStep{},
	verifyStep{},
	releaseVolumeStep{},
	unpinPlacementStep{},
	uncordonStep{},
	finishStep{},
}

// stepsByKind indexes stepTable by kind.
var stepsByKind = func() map[StepKind]step {
	m := make(map[StepKind]step, len(stepTable))
	for _, s := range stepTable {
		m[s.Info().kind] = s
	}
	return m
}()

// stepOf returns the step of kind.
func stepOf(kind StepKind) (step, error) {
	s, ok := stepsByKind[kind]
	if !ok {
		return nil, fmt.Errorf("%w: unknown step %q", ErrInvalidConfig, kind)
	}
	return s, nil
}

// addSteps appends to p the steps of stepTable that p holds, in p's words,
// each with the membership it leaves, starting from before; it returns
// the lowest fault tolerance any leaves (before's for none).
func (p *Plan) addSteps(before Membership) int {
	prev, low := before, before.FaultTolerance()
	for _, s := range stepTable {
		t, ok := s.Text(p)
		if !ok {
			continue
		}
		info := s.Info()
		prev = prev.apply(info.effect)
		p.Steps = append(p.Steps, Step{Kind: info.kind, After: prev, Action: t.action, Precondition: t.pre, Check: t.check})
		low = min(low, prev.FaultTolerance())
	}
	return low
}

// checkpointRef names the checkpoint ConfigMap as namespace/name.
func (p *Plan) checkpointRef() string { return p.Namespace + "/" + checkpointName(p.Cluster) }

// cordons reports whether a relocation plan cordons the source node.
func (p *Plan) cordons() bool { return !p.Restore && !p.Options.SkipCordon && p.Member.Node != "" }

// statefulSetSteps reports whether p is a relocation in the StatefulSet
// layout, operatorSteps one in a v1alpha2 layout.
func (p *Plan) statefulSetSteps() bool { return !p.Restore && !p.Layout.operatorManaged() }

func (p *Plan) operatorSteps() bool { return !p.Restore && p.Layout.operatorManaged() }
