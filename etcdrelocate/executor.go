package etcdrelocate

import (
	"context"
	"errors"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
)

// Result reports an execution.
type Result struct {
	// Steps are the steps run, in order, with what each did.
	Steps []StepResult
	// NewMemberID is the ID of the member that replaced the old one.
	NewMemberID uint64
	// LeaderMoved reports that leadership was moved away first.
	LeaderMoved bool
	// SnapshotPath and SnapshotBytes describe the snapshot taken.
	SnapshotPath  string
	SnapshotBytes int64
	// RemovedAt and PromotedAt bound the window without the member (zero
	// fault tolerance in a 3-member cluster), when this run saw both.
	RemovedAt, PromotedAt time.Time
	// Verification is the final check.
	Verification *Verification
	// Duration is the run's wall time.
	Duration time.Duration
}

// StepResult is one executed step.
type StepResult struct {
	Kind StepKind
	// Skipped is true when the step found its work already done (a resumed
	// run) or had nothing to do.
	Skipped  bool
	Message  string
	Duration time.Duration
}

// Step returns the result of the step of the given kind, or nil.
func (r *Result) Step(kind StepKind) *StepResult {
	if r == nil {
		return nil
	}
	for i := range r.Steps {
		if r.Steps[i].Kind == kind {
			return &r.Steps[i]
		}
	}
	return nil
}

// run is one execution of a plan.
type run struct {
	r       *Relocator
	p       *Plan
	conn    *connector
	cli     *clientv3.Client
	mem     *memberOps
	cp      *Checkpoint
	res     *Result
	learner uint64
	// misplaced counts attempts to move a misplaced new member.
	misplaced int
	// bg is the context of work that runs alongside the steps (the
	// snapshot); it ends with Execute.
	bg context.Context
	// snap is the snapshot streaming in the background, nil if none.
	snap *bgSnapshot
	// stall tracks members that stop answering.
	stall *stallWatch
	// lease is the run's Lease (nil in unit tests of single steps).
	lease *lease
	// cpCM is the checkpoint ConfigMap as last read or written: every
	// write is conditional on its resourceVersion. cpStamp is the Started
	// stamp of the checkpoint this run created.
	cpCM    *corev1.ConfigMap
	cpStamp time.Time
}

// Execute carries out plan p step by step. Each step first works out from
// etcd and Kubernetes whether its work is already done (so a re-run after a
// crash or a cancelled context continues where the last run stopped), then
// checks its precondition, acts, and checks the result. Execute stops at
// the first failing step with a *StepError and leaves the checkpoint; run
// it again (with a plan from Plan, which finds the checkpoint) to resume.
// If the new member does not start or catch up in time, Execute removes
// its learner again and returns a *RolledBackError (errors.Is
// ErrRolledBack): the cluster then has one voter fewer, and the old member
// is not re-added; RestoreReplica adds it back on a node of your choice.
//
// Execute first takes the cluster's relocation Lease: while another
// executor holds it, Execute returns a *LockedError (errors.Is ErrLocked)
// naming the holder and when its lease runs out, and changes nothing. The
// run renews the Lease while it works and checks it before every change to
// etcd or Kubernetes; if it loses it, it stops with an error wrapping
// ErrLeaseLost. A plan made before another run changed the cluster fails
// with ErrPlanStale: plan again.
func (r *Relocator) Execute(ctx context.Context, p *Plan) (*Result, error) {
	if err := r.usable(); err != nil {
		return &Result{}, err
	}
	if p == nil {
		return &Result{}, errNil("*Plan")
	}
	return r.underLease(ctx, p.Namespace, p.Cluster, func(ctx context.Context, fr *Relocator, l *lease) (*Result, error) {
		return fr.execute(ctx, p, l)
	})
}

// underLease runs fn holding the cluster's Lease, with a Relocator whose
// clients check the lease before every change and a context that ends
// when the lease is lost; it releases the lease when fn returns.
func (r *Relocator) underLease(ctx context.Context, ns, cluster string,
	fn func(ctx context.Context, fr *Relocator, l *lease) (*Result, error)) (res *Result, err error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	l, err := r.takeLease(ctx, ns, leaseName(cluster), func(err error) { cancel(err) })
	if err != nil {
		return &Result{}, err
	}
	defer func() {
		l.release(ctx)
		if lerr := l.lostErr(); lerr != nil && err != nil && !errors.Is(err, ErrLeaseLost) {
			if errors.Is(err, context.Canceled) {
				err = lerr
			} else {
				err = fmt.Errorf("%w: %w", lerr, err)
			}
		}
	}()
	return fn(ctx, r.fencedRelocator(l), l)
}

func (r *Relocator) execute(ctx context.Context, p *Plan, l *lease) (*Result, error) {
	x := &run{r: r, p: p, res: &Result{}, lease: l}
	start := time.Now()
	defer func() { x.res.Duration = time.Since(start) }()
	if err := x.open(ctx); err != nil {
		return x.res, err
	}
	defer x.cli.Close()
	defer x.conn.close()
	if err := x.current(ctx); err != nil {
		return x.res, &StepError{Step: StepCheckpoint, Err: err}
	}
	bg, stopBG := context.WithCancel(ctx)
	x.bg = bg
	// The steps' waits (not the snapshot's) wait for stalled members.
	x.stall = newStallWatch(x.r, p, x.mem)
	x.stall.memberList(ctx) // while every member answers: a stalled one is still probed later
	defer func() {
		// Keep a snapshot that is still streaming when a step failed (it
		// is a rollback point); a cancelled run cancels it and waits until
		// its partial file is gone.
		x.joinSnapshot(ctx)
		stopBG()
		if x.snap != nil {
			<-x.snap.done
		}
	}()
	for i, st := range p.Steps {
		if err := ctx.Err(); err != nil {
			return x.res, err
		}
		if err := x.lease.confirm(ctx); err != nil {
			return x.res, &StepError{Step: st.Kind, Err: err}
		}
		r.emit(Event{Step: st.Kind, Index: i, Total: len(p.Steps), Phase: EventStarted, Message: st.Action})
		x.stall.enter(st.Kind, i, len(p.Steps))
		t0 := time.Now()
		msg, skipped, err := x.stall.runStep(ctx, func(ctx context.Context) (string, bool, error) { return stepRun(ctx, x, st.Kind) })
		el := time.Since(t0)
		if err != nil {
			r.log.Error("relocation step failed", "step", st.Kind, "err", err)
			if rb := x.rollback(ctx, st.Kind, err); rb != nil {
				err = rb
			} else {
				err = &StepError{Step: st.Kind, Err: err}
			}
			r.emit(Event{Step: st.Kind, Index: i, Total: len(p.Steps), Phase: EventFailed, Elapsed: el, Message: err.Error(), Err: err})
			return x.res, err
		}
		x.res.Steps = append(x.res.Steps, StepResult{Kind: st.Kind, Skipped: skipped, Message: msg, Duration: el})
		phase := EventDone
		if skipped {
			phase = EventSkipped
		}
		r.log.Info("relocation step", "step", st.Kind, "phase", phase, "took", el, "msg", msg)
		r.emit(Event{Step: st.Kind, Index: i, Total: len(p.Steps), Phase: phase, Elapsed: el, Message: msg})
		x.collectSnapshot(ctx)
	}
	return x.res, nil
}

// stepRun runs the step of kind.
func stepRun(ctx context.Context, x *run, kind StepKind) (string, bool, error) {
	s, err := stepOf(kind)
	if err != nil {
		return "", false, err
	}
	return s.Run(ctx, x)
}

func (r *Relocator) emit(e Event) {
	if r.cfg.Progress != nil {
		r.cfg.Progress(e)
	}
}

// open connects to etcd through the members' client URLs.
func (x *run) open(ctx context.Context) error {
	var err error
	if x.conn, err = x.r.connector(ctx, x.p.Namespace); err != nil {
		return err
	}
	kv, err := x.r.observeKube(ctx, x.p.Namespace, x.p.Cluster)
	if err != nil {
		return err
	}
	// Talk to the other members only: the moved member is removed, then
	// replaced by a learner that refuses most calls.
	moved := hostOf(x.p.Member.PeerURL)
	var eps []string
	for _, ep := range x.r.endpoints(kv, x.p.Namespace) {
		if hostOf(ep) != moved {
			eps = append(eps, ep)
		}
	}
	if len(eps) == 0 {
		return fmt.Errorf("%w: no etcd endpoints in %s (no pods of %s)", ErrInvalidConfig, x.p.Namespace, x.p.Cluster)
	}
	if x.cli, err = x.conn.client(eps...); err != nil {
		return err
	}
	x.mem = x.conn.ops(x.cli, x.r.log, x.r.t.Membership)
	if x.lease != nil {
		fenceMembership(x.mem, x.lease)
	}
	return nil
}

// revision returns the cluster's current revision.
func (x *run) revision(ctx context.Context) (int64, error) {
	cctx, cancel := x.mem.callCtx(ctx)
	defer cancel()
	resp, err := x.cli.Get(cctx, "health", clientv3.WithCountOnly())
	if err != nil {
		return 0, fmt.Errorf("read the revision: %w", err)
	}
	return resp.Header.Revision, nil
}

// rollback handles a timeout of the new member: it removes the learner (if
// it is still one), records the rollback and uncordons, and returns the
// *RolledBackError. It returns nil where no rollback applies (cancelled
// contexts, failures before the old member left, or a member that did
// become a voter). The old member's volume stays (its reclaim policy is
// Retain since stop-member): it holds the old member's data.
func (x *run) rollback(ctx context.Context, kind StepKind, cause error) error {
	if s, err := stepOf(kind); err != nil || !s.Info().rollsBack {
		return nil
	}
	if !errors.Is(cause, ErrTimeout) || ctx.Err() != nil || x.p.Layout.operatorManaged() {
		// The operator owns the membership of v1alpha2 clusters.
		return nil
	}
	// Roll back on a fresh context: the step's may be spent.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), x.r.t.Membership+x.r.t.Call)
	defer cancel()
	if x.lease.lostErr() != nil {
		return nil // a fenced run changes nothing more
	}
	rb := &RolledBackError{Namespace: x.p.Namespace, Cluster: x.p.Cluster, Step: kind, Voters: x.p.Voters - 1, RemovedID: x.p.Member.ID, Cause: cause}
	ms, err := x.mem.list(rctx)
	if err != nil {
		return nil
	}
	for _, m := range ms {
		if m.ID == x.p.Member.ID {
			return nil // the old member is still there: nothing to roll back
		}
	}
	if m := x.newMember(ms); m != nil {
		if !m.IsLearner {
			return nil // it became a voter after all
		}
		rb.LearnerID = m.ID
		if err := x.mem.remove(rctx, m.ID); err != nil {
			x.r.log.Error("ROLLBACK FAILED: could not remove the learner", "learner", FormatID(m.ID), "err", err)
			return nil
		}
	}
	if _, err := x.releaseHeld(rctx); err != nil {
		x.r.log.Error("could not release the held claim", "claim", x.p.Member.PVC, "err", err)
	}
	x.joinSnapshot(rctx)
	if x.cp != nil {
		rb.SnapshotPath, rb.Volume = x.cp.SnapshotPath, x.cp.RetainedVolume
	}
	x.r.log.Error("ROLLED BACK: the new member did not become a voter; the cluster runs with one voter fewer",
		"voters", rb.Voters, "removed", FormatID(rb.RemovedID), "learner", FormatID(rb.LearnerID), "snapshot", rb.SnapshotPath,
		"volume", rb.Volume, "cause", cause)
	if x.cp != nil {
		x.cp.Phase = PhaseRolledBack
		if err := x.saveCheckpoint(rctx); err != nil {
			x.r.log.Error("could not record the rollback in the checkpoint", "err", err)
		}
		if x.cp.CordonedSource {
			if _, _, err := (uncordonStep{}).Run(rctx, x); err != nil {
				x.r.log.Error("could not uncordon the source node", "err", err)
			}
		}
	}
	return rb
}
