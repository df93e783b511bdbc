package etcdrelocate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// EvacuationReport is what Evacuate did, move by move.
type EvacuationReport struct {
	Node   string      `json:"node,omitempty"`
	Spread *ClusterRef `json:"spread,omitempty"`
	// Moved are the relocations done (or found done by a re-run).
	Moved []MoveOutcome `json:"moved,omitempty"`
	// Failed are the relocations that stopped, each in a documented
	// state with the command that resumes it.
	Failed []MoveOutcome `json:"failed,omitempty"`
	// NotRun are the moves not started: StopOnFailure after a failure, or
	// a cancelled context.
	NotRun []Move `json:"notRun,omitempty"`
	// Refused are the plan's refusals.
	Refused  []Refusal     `json:"refused,omitempty"`
	Duration time.Duration `json:"duration"`
}

// MoveOutcome is one relocation of an evacuation.
type MoveOutcome struct {
	Move
	// Done says what happened: "moved", "resumed and moved", "already
	// moved" (a re-run found the member gone from the node).
	Done string `json:"done,omitempty"`
	// Err is why it failed; State the state it left (the checkpoint's
	// phase, the membership) and Resume the command that resumes it.
	Err    string `json:"error,omitempty"`
	State  string `json:"state,omitempty"`
	Resume string `json:"resume,omitempty"`
	// Took is the move's wall time, waits for its cluster to settle
	// included.
	Took time.Duration `json:"took"`

	err error
}

// Failure returns the move's error for errors.Is and errors.As (a
// *RolledBackError, a *StepError, ...), nil for a move that did not fail.
func (o MoveOutcome) Failure() error { return o.err }

// EvacuationEvent reports an evacuation's progress, per tenant.
type EvacuationEvent struct {
	Move Move
	// Phase is EventStarted, EventDone, EventSkipped or EventFailed for
	// the move as a whole; Step is set instead for a step of its
	// relocation.
	Phase EventPhase
	Step  *Event
	Err   error
}

// Evacuate carries out an evacuation (or spread) plan. It takes the
// evacuation's own Lease first — evacuate-<node> in
// EvacuationOptions.LeaseNamespace, or <cluster>-spread in the cluster's
// namespace — so that one runs per node at a time: while another holds it,
// Evacuate changes nothing and returns a *LockedError naming the holder.
// Then it cordons the node (unless SkipCordon) and runs the moves wave by
// wave, up to MaxParallel at once; each is planned afresh from the cluster
// as it is then and executed under its cluster's relocation Lease, so a
// re-run after kill -9 or Ctrl-C finds the moves done, resumes the one a
// checkpoint records, and does the rest: run the same call again. A failed
// move stops the others only with StopOnFailure. Every change made is
// fenced by the evacuation's Lease too. progress, when set, gets an event
// per move and per step.
func (r *Relocator) Evacuate(ctx context.Context, p *EvacuationPlan, progress func(EvacuationEvent)) (*EvacuationReport, error) {
	if err := r.usable(); err != nil {
		return nil, err
	}
	if p == nil {
		return nil, errNil("*EvacuationPlan")
	}
	start := time.Now()
	rep := &EvacuationReport{Node: p.Node, Spread: p.Spread, Refused: p.Refused}
	ns, name := p.lease()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	l, err := r.takeLease(ctx, ns, name, func(err error) { cancel(err) })
	if err != nil {
		return rep, err
	}
	defer l.release(ctx)
	fr := r.fencedRelocator(l)
	if p.Node != "" && !p.Options.SkipCordon {
		if err := setUnschedulable(ctx, fr.cfg.Kube, p.Node, true); err != nil {
			return rep, fmt.Errorf("cordon %s: %w", p.Node, err)
		}
	}
	if progress == nil {
		progress = func(EvacuationEvent) {}
	}
	failed := false
	for i := 0; i < len(p.Moves); {
		j := i
		for j < len(p.Moves) && p.Moves[j].Wave == p.Moves[i].Wave {
			j++
		}
		if failed && p.Options.StopOnFailure || ctx.Err() != nil {
			rep.NotRun = append(rep.NotRun, p.Moves[i:]...)
			break
		}
		for _, o := range fr.runWave(ctx, p.Moves[i:j], p.Options, progress) {
			if o.err != nil {
				failed = true
				rep.Failed = append(rep.Failed, o)
			} else {
				rep.Moved = append(rep.Moved, o)
			}
		}
		i = j
	}
	rep.Duration = time.Since(start)
	if err := l.lostErr(); err != nil {
		return rep, err
	}
	return rep, ctx.Err()
}

// lease returns where the plan's Lease lives.
func (p *EvacuationPlan) lease() (ns, name string) {
	if p.Spread != nil {
		return p.Spread.Namespace, p.Spread.Cluster + "-spread"
	}
	ns = p.Options.LeaseNamespace
	if ns == "" {
		ns = "kube-system"
	}
	return ns, "evacuate-" + p.Node
}

// runWave runs the moves of one wave, up to MaxParallel at once.
func (r *Relocator) runWave(ctx context.Context, moves []Move, opts EvacuationOptions, progress func(EvacuationEvent)) []MoveOutcome {
	out := make([]MoveOutcome, len(moves))
	sem := make(chan struct{}, max(opts.MaxParallel, 1))
	var mu sync.Mutex // serialises progress
	report := func(e EvacuationEvent) { mu.Lock(); defer mu.Unlock(); progress(e) }
	var wg sync.WaitGroup
	for i, mv := range moves {
		wg.Go(func() {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				out[i] = MoveOutcome{Move: mv, Err: ctx.Err().Error(), err: ctx.Err()}
				return
			}
			defer func() { <-sem }()
			report(EvacuationEvent{Move: mv, Phase: EventStarted})
			out[i] = r.runMove(ctx, mv, opts, func(e Event) { report(EvacuationEvent{Move: mv, Step: &e}) })
			phase := EventDone
			if out[i].err != nil {
				phase = EventFailed
			}
			report(EvacuationEvent{Move: mv, Phase: phase, Err: out[i].err})
		})
	}
	wg.Wait()
	return out
}

// settleWait bounds how long a move waits for its cluster to settle after
// an earlier move (readiness lags, a PodDisruptionBudget catching up) or
// for a dead run's relocation Lease to lapse.
const settleWait = 3 * time.Minute

// runMove plans one move afresh and executes it.
func (r *Relocator) runMove(ctx context.Context, mv Move, opts EvacuationOptions, step func(Event)) MoveOutcome {
	t0 := time.Now()
	o := MoveOutcome{Move: mv}
	mr := *r
	mr.cfg.Progress = step
	deadline := time.Now().Add(settleWait)
	for {
		s, err := r.Observe(ctx, mv.Namespace, mv.Cluster)
		if err == nil && s.Checkpoint == nil {
			if m := s.FindMember(mv.Member); m == nil || m.Node() != mv.From {
				o.Done, o.Took = "already moved", time.Since(t0)
				return o
			}
		}
		var plan *Plan
		if err == nil {
			plan, err = PlanFor(s, Request{Namespace: mv.Namespace, Cluster: mv.Cluster, Member: mv.Member, TargetNode: mv.To, Options: opts.Relocation})
		}
		if err == nil {
			_, err = mr.Execute(ctx, plan)
		}
		if err == nil {
			o.Done, o.Took = "moved", time.Since(t0)
			if plan.Resume {
				o.Done = "resumed and moved"
			}
			return o
		}
		if !settling(err) || time.Now().After(deadline) || sleepCtx(ctx, 2*time.Second) != nil {
			return r.failed(ctx, o, err, t0)
		}
	}
}

// settling reports a refusal that passes by itself: a cluster settling
// after an earlier move, or a relocation Lease still held by a run that
// stopped (it lapses).
func settling(err error) bool {
	for _, e := range []error{ErrRolloutInProgress, ErrDisruptionNotAllowed, ErrIndexLag, ErrLocked} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// failed fills in a failed move's state and the command that resumes it.
func (r *Relocator) failed(ctx context.Context, o MoveOutcome, err error, t0 time.Time) MoveOutcome {
	o.err, o.Err, o.Took = err, err.Error(), time.Since(t0)
	o.Resume = fmt.Sprintf("etcd-relocate --namespace %s --cluster %s --member %s --to-node %s", o.Namespace, o.Cluster, o.Member, o.To)
	var rb *RolledBackError
	if errors.As(err, &rb) {
		o.Resume = fmt.Sprintf("etcd-relocate --namespace %s --cluster %s --restore-to-node %s", o.Namespace, o.Cluster, o.To)
	}
	s, oerr := r.Observe(context.WithoutCancel(ctx), o.Namespace, o.Cluster)
	switch {
	case oerr != nil:
		o.State = "unknown: " + oerr.Error()
	case s.Checkpoint != nil:
		o.State = fmt.Sprintf("checkpoint %s records phase %s; %s, %s", checkpointName(s.Cluster), s.Checkpoint.Phase,
			plural(len(s.Voters()), "voter"), plural(len(s.Learners()), "learner"))
	default:
		o.State = fmt.Sprintf("no relocation recorded; %s, %s", plural(len(s.Voters()), "voter"), plural(len(s.Learners()), "learner"))
	}
	return o
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// String renders the report: what moved, what failed with its state and
// the command that resumes it, what was refused or not run.
func (r *EvacuationReport) String() string {
	var b strings.Builder
	what := "evacuation of " + r.Node
	if r.Spread != nil {
		what = "spread of " + r.Spread.String()
	}
	fmt.Fprintf(&b, "%s: %d moved, %d failed, %d refused, %d not run in %s\n", what, len(r.Moved), len(r.Failed), len(r.Refused),
		len(r.NotRun), r.Duration.Round(time.Second))
	for _, o := range r.Moved {
		fmt.Fprintf(&b, "  moved   %-36s %-12s %s → %s: %s in %s\n", o.ClusterRef, o.Member, o.From, o.To, o.Done, o.Took.Round(time.Second))
	}
	for _, o := range r.Failed {
		fmt.Fprintf(&b, "  FAILED  %-36s %-12s %s → %s: %s\n          state: %s\n          resume: %s\n", o.ClusterRef, o.Member,
			o.From, o.To, o.Err, o.State, o.Resume)
	}
	for _, f := range r.Refused {
		fmt.Fprintf(&b, "  refused %-36s %-12s %s\n", f.ClusterRef, f.Member, strings.Join(f.Reasons, "; "))
	}
	for _, m := range r.NotRun {
		fmt.Fprintf(&b, "  not run %-36s %-12s %s → %s\n", m.ClusterRef, m.Member, m.From, m.To)
	}
	return b.String()
}
