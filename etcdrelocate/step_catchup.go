package etcdrelocate

import (
	"context"
	"fmt"
	"time"
)

// catchUpStep waits for the learner to catch up.
type catchUpStep struct{}

// Info declares the step.
func (catchUpStep) Info() stepInfo {
	return stepInfo{kind: StepCatchUp, does: "StatefulSet: wait until the learner has applied the leader's committed index", effect: effectNone, rollsBack: true}
}

// Text is the step in p's words.
func (catchUpStep) Text(p *Plan) (stepText, bool) {
	return stepText{"wait until the learner has applied the leader's committed index",
		"the learner runs", "learner applied index ≥ leader committed index sampled when the wait began"}, p.Restore || p.statefulSetSteps()
}

// Run waits until the learner has applied the leader's committed index
// as sampled when the wait began.
func (catchUpStep) Run(ctx context.Context, x *run) (string, bool, error) {
	m, ms, err := x.learnerID(ctx)
	if err != nil {
		return "", false, err
	}
	if !m.IsLearner {
		return "already a voter", true, nil
	}
	leader, err := x.agreedLeader(ctx, ms, m.ID)
	if err != nil {
		return "", false, err
	}
	target := leader.RaftIndex
	bound := x.r.t.catchUp(leader.DBSize)
	var applied uint64
	last := time.Now()
	err = x.stall.retry(ctx, bound, "learner catch-up", func(ctx context.Context) (bool, error) {
		st, err := x.memberStatus(ctx, m)
		if err != nil {
			return false, keepTrying{err}
		}
		applied = st.RaftAppliedIndex
		if time.Since(last) > 2*time.Second {
			x.r.log.Info("learner catching up", "applied", applied, "target", target, "dbSize", st.DBSize)
			last = time.Now()
		}
		if applied >= target {
			return true, nil
		}
		return false, keepTrying{fmt.Errorf("learner applied %d of %d", applied, target)}
	})
	if err != nil {
		return "", false, err
	}
	return fmt.Sprintf("applied index %d ≥ leader's %d", applied, target), false, nil
}
