package etcdrelocate

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// A stalled member is one that stops answering without being gone: a
// process stopped by SIGSTOP or a debugger, a frozen VM, a node starved of
// CPU. etcd cannot tell it from a dead one, and in the window without
// fault tolerance neither can the cluster make progress without it. The
// executor waits for it within Options.StallBudget: it reports the stall
// in the progress events (EventStalled, EventRecovered) and does not count
// the time against the bound of the wait it interrupted. A member that
// answers again within the budget lets the run continue; one that does not
// ends the run with a *StalledError that says what state the cluster is in
// and how to resume.

// Event phases of a stall (Event.Stall describes it).
const (
	// EventStalled reports a member that does not answer; it repeats
	// while the stall lasts.
	EventStalled EventPhase = "stalled"
	// EventRecovered reports that a stalled member answers again.
	EventRecovered EventPhase = "recovered"
)

// defaultStallBudget is Options.StallBudget's default.
const defaultStallBudget = 2 * time.Minute

// stallReportEvery is how often a lasting stall is reported again, and
// stallCheckEvery how often the members are asked at most.
const (
	stallReportEvery = 5 * time.Second
	stallCheckEvery  = time.Second
	stallSettleEvery = 100 * time.Millisecond
)

// ErrStalled is returned (inside a *StalledError) when a member did not
// answer for longer than Options.StallBudget.
var ErrStalled = errors.New("etcdrelocate: member stalled")

// Stall describes a member that does not answer (Event.Stall).
type Stall struct {
	// MemberID is the member's ID, Member its name (or the ID in hex).
	MemberID uint64
	Member   string
	// For is how long it has not answered, Budget how long the executor
	// waits for it (Options.StallBudget).
	For, Budget time.Duration
}

// StalledError reports a member that stopped answering for longer than
// Options.StallBudget. Execute stopped without changing anything further;
// the membership is as Voters and Learners say and the checkpoint is kept.
// Resume says how to continue.
type StalledError struct {
	// Step is the step that was waiting.
	Step StepKind
	// MemberID and Member identify the stalled member; For is how long it
	// did not answer, Budget the limit.
	MemberID    uint64
	Member      string
	For, Budget time.Duration
	// Voters and Learners are the membership last read from etcd.
	Voters, Learners int
	// Checkpoint is the ConfigMap (namespace/name) that records the
	// relocation.
	Checkpoint string
	// Resume says how to continue.
	Resume string
}

func (e *StalledError) Error() string {
	return fmt.Sprintf("etcdrelocate: member %s (%s) has not answered for %s (stall budget %s) while step %s waited; stopped with %s and %s, nothing further changed, checkpoint kept in ConfigMap %s; %s",
		e.Member, FormatID(e.MemberID), e.For.Round(time.Second), e.Budget, e.Step, plural(e.Voters, "voter"), plural(e.Learners, "learner"), e.Checkpoint, e.Resume)
}

// Unwrap returns ErrStalled.
func (e *StalledError) Unwrap() error { return ErrStalled }

// stallBudget returns the budget, the default for zero.
func (o Options) stallBudget() time.Duration {
	if o.StallBudget <= 0 {
		return defaultStallBudget
	}
	return o.StallBudget
}

// stallWatch tracks which members stop answering during a run. The waits
// of the executor (retryWake) consult it after every attempt that did not
// succeed.
type stallWatch struct {
	// r reports (its progress events and log), p is the plan run, mem
	// reaches the members.
	r      *Relocator
	p      *Plan
	mem    *memberOps
	budget time.Duration

	mu sync.Mutex
	// step is the step running, index its position of total.
	step         StepKind
	index, total int
	// members is the membership last read; answered the members that
	// answered Status in this run; silent when each silent member was
	// first found not answering; reported when it was last reported.
	members  []*pb.Member
	answered map[uint64]bool
	silent   map[uint64]time.Time
	reported map[uint64]time.Time
	// checked is when the members were last asked, stalled what that
	// found.
	checked time.Time
	stalled bool
	// failed is the stall past the budget, once there is one.
	failed *StalledError
}

// newStallWatch returns the stall watch of a run of p; the membership
// operations of mem (and every wait of the run) consult it from then on.
func newStallWatch(r *Relocator, p *Plan, mem *memberOps) *stallWatch {
	w := &stallWatch{r: r, p: p, mem: mem, budget: p.Options.stallBudget(), answered: map[uint64]bool{},
		silent: map[uint64]time.Time{}, reported: map[uint64]time.Time{}}
	mem.stall = w
	return w
}

// enter records the step that runs now.
func (w *stallWatch) enter(kind StepKind, index, total int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.step, w.index, w.total = kind, index, total
}

// expected reports whether member m should answer: a voter other than
// the moved member, or any member that answered earlier in this run (the
// new member once it has started).
func (w *stallWatch) expected(m *pb.Member) bool {
	return (!m.IsLearner && m.ID != w.p.Member.ID) || w.answered[m.ID]
}

// heard records that member id answered in this run (the new member
// once its pod serves): from then on its silence is a stall. A nil w (a
// wait outside Execute) ignores it.
func (w *stallWatch) heard(id uint64) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.answered[id] = true
}

// check asks the members for their Status (at most once per
// stallCheckEvery) and reports whether one that should answer does not.
// It returns a *StalledError once one has not answered for the budget.
func (w *stallWatch) check(ctx context.Context) (bool, error) {
	return w.checkNow(ctx, false)
}

// settle is called when a wait succeeded: if members were stalled, it asks
// them again at once, so that their recovery is reported.
func (w *stallWatch) settle(ctx context.Context) {
	w.mu.Lock()
	stalled := w.stalled
	w.mu.Unlock()
	if stalled {
		_, _ = w.checkNow(ctx, true)
	}
}

// checkNow is check; force asks again unless the last check is under
// stallSettleEvery old. A stall past the budget is kept: every later check
// returns it too.
func (w *stallWatch) checkNow(ctx context.Context, force bool) (bool, error) {
	w.mu.Lock()
	every := stallCheckEvery
	if force {
		every = stallSettleEvery
	}
	if w.failed != nil || time.Since(w.checked) < every {
		defer w.mu.Unlock()
		if w.failed != nil {
			return true, w.failed
		}
		return w.stalled, nil
	}
	// Claimed before the probe: the step's waits and the watch beside the
	// step then never probe at once.
	w.checked = time.Now()
	w.mu.Unlock()
	ms := w.memberList(ctx)
	start := time.Now()
	answers := w.probe(ctx, ms)
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	now := time.Now()
	var events []Event
	w.mu.Lock()
	defer func() {
		w.mu.Unlock()
		for _, e := range events {
			w.r.emit(e)
		}
	}()
	w.checked = now
	present := map[uint64]bool{}
	for _, m := range ms {
		present[m.ID] = true
		if _, probed := answers[m.ID]; !probed {
			continue
		}
		if answers[m.ID] {
			if since, ok := w.silent[m.ID]; ok {
				events = append(events, w.event(EventRecovered, m, now.Sub(since), "member %s answers again after %s"))
				w.r.log.Warn("stalled member answers again", "member", memberLabel(m), "after", now.Sub(since).Round(time.Millisecond))
				delete(w.silent, m.ID)
				delete(w.reported, m.ID)
			}
			w.answered[m.ID] = true
			continue
		}
		if !w.expected(m) {
			continue
		}
		since, ok := w.silent[m.ID]
		if !ok {
			since = start
			w.silent[m.ID] = since
		}
		d := now.Sub(since)
		if d > w.budget {
			w.failed = w.stalledError(m, d, ms)
			return true, w.failed
		}
		if now.Sub(w.reported[m.ID]) >= stallReportEvery {
			w.reported[m.ID] = now
			events = append(events, w.event(EventStalled, m, d, "member %s stalled: no answer for %s; waiting up to "+w.budget.String()))
			w.r.log.Warn("member stalled; waiting for it", "member", memberLabel(m), "for", d.Round(time.Millisecond), "budget", w.budget, "step", w.step)
		}
	}
	for id := range w.silent {
		if !present[id] {
			delete(w.silent, id)
		}
	}
	w.stalled = len(w.silent) > 0
	return w.stalled, nil
}

// event builds a stall event of the running step; format takes the
// member and the duration.
func (w *stallWatch) event(phase EventPhase, m *pb.Member, d time.Duration, format string) Event {
	st := &Stall{MemberID: m.ID, Member: memberLabel(m), For: d, Budget: w.budget}
	return Event{Step: w.step, Index: w.index, Total: w.total, Phase: phase, Elapsed: d,
		Message: fmt.Sprintf(format, st.Member+" ("+FormatID(m.ID)+")", d.Round(100*time.Millisecond)), Stall: st}
}

// memberList reads the membership without needing quorum (serializable,
// from whichever member answers), and falls back to the last one read.
func (w *stallWatch) memberList(ctx context.Context) []*pb.Member {
	cctx, cancel := context.WithTimeout(ctx, statusCall)
	defer cancel()
	resp, err := w.mem.api.MemberList(cctx, clientv3.WithSerializable())
	w.mu.Lock()
	defer w.mu.Unlock()
	if err == nil {
		w.members = resp.Members
	}
	return w.members
}

// probe asks every member with a client URL for its Status, in parallel,
// and reports which answered.
func (w *stallWatch) probe(ctx context.Context, ms []*pb.Member) map[uint64]bool {
	out := map[uint64]bool{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, m := range ms {
		url := w.clientURL(m)
		if url == "" || m.ID == w.p.Member.ID {
			continue
		}
		wg.Go(func() {
			_, err := w.mem.status(ctx, url)
			mu.Lock()
			out[m.ID] = err == nil
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}

// clientURL returns where m serves clients: its published URL, or for the
// new member of a fixed-name layout the URL its pod will serve.
func (w *stallWatch) clientURL(m *pb.Member) string {
	if len(m.ClientURLs) > 0 {
		return m.ClientURLs[0]
	}
	if !w.p.Layout.operatorManaged() && len(m.PeerURLs) > 0 && sameURL(m.PeerURLs[0], w.p.Member.PeerURL) {
		return clientURLFromPeer(w.p.Member.PeerURL)
	}
	return ""
}

// stalledError describes the stall of m and how to resume.
func (w *stallWatch) stalledError(m *pb.Member, d time.Duration, ms []*pb.Member) *StalledError {
	e := &StalledError{Step: w.step, MemberID: m.ID, Member: memberLabel(m), For: d, Budget: w.budget,
		Checkpoint: w.p.Namespace + "/" + checkpointName(w.p.Cluster)}
	for _, mem := range ms {
		if mem.IsLearner {
			e.Learners++
		} else {
			e.Voters++
		}
	}
	e.Resume = fmt.Sprintf("once member %s answers again (if its process is stopped or hung, delete its pod so that it restarts), "+
		"run Plan and Execute again (the same command): they resume from the checkpoint at step %s; "+
		"raise Options.StallBudget to wait longer", e.Member, w.step)
	w.r.log.Error("member stalled past the budget; stopping", "member", e.Member, "for", d.Round(time.Millisecond),
		"budget", w.budget, "step", w.step, "voters", e.Voters, "learners", e.Learners)
	return e
}

// watch probes the members every stallCheckEvery while a step runs, so that
// a stall is reported even while the step is blocked in a single call (a
// linearizable read waits as long as the cluster has no quorum). Past the
// budget it cancels the step with the *StalledError as the cause. It
// returns when ctx ends.
func (w *stallWatch) watch(ctx context.Context, stop context.CancelCauseFunc) {
	t := time.NewTicker(stallCheckEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if _, err := w.check(ctx); err != nil {
			var se *StalledError
			if errors.As(err, &se) {
				stop(se)
			}
			return
		}
	}
}

// runStep runs one step with the watch beside it; a step cut short by a
// stall past the budget returns the *StalledError.
func (w *stallWatch) runStep(ctx context.Context, step func(ctx context.Context) (string, bool, error)) (string, bool, error) {
	sctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	go w.watch(sctx, stop)
	msg, skipped, err := step(sctx)
	var se *StalledError
	if err != nil && errors.As(context.Cause(sctx), &se) && ctx.Err() == nil {
		err = se
	}
	return msg, skipped, err
}
