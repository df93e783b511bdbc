package etcdrelocate

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// stallRun is fakeRun with a stall watch of the given budget and the
// progress events recorded.
func stallRun(t *testing.T, f *fakeEtcd, budget time.Duration) (*run, context.Context, func() []Event) {
	t.Helper()
	x := fakeRun(t, f)
	var mu sync.Mutex
	var events []Event
	x.r.cfg.Progress = func(e Event) {
		mu.Lock()
		defer mu.Unlock()
		events = append(events, e)
	}
	x.p.Options.StallBudget = budget
	x.stall = newStallWatch(x.r, x.p, x.mem)
	x.stall.enter(StepCatchUp, 9, 15)
	return x, context.Background(), func() []Event {
		mu.Lock()
		defer mu.Unlock()
		return append([]Event(nil), events...)
	}
}

func phases(events []Event) map[EventPhase]int {
	out := map[EventPhase]int{}
	for _, e := range events {
		out[e.Phase]++
	}
	return out
}

// TestStallDecisions: a voter that stops answering in the window without
// fault tolerance is waited for (the wait's own bound, 300ms here, does not
// run while it is silent), reported, and either the step completes once it
// answers again or, past the budget, stops with a *StalledError that names
// the member, the step, the membership and how to resume.
func TestStallDecisions(t *testing.T) {
	t.Run("a voter silent for a while", func(t *testing.T) {
		f := newFakeEtcd(3)
		replaced(f, true, 100)
		f.advance[0x900] = 100
		saved := f.status[0x102]
		f.status[0x102] = nil
		x, ctx, events := stallRun(t, f, time.Minute)
		go func() {
			time.Sleep(1500 * time.Millisecond)
			f.set(func(f *fakeEtcd) { f.status[0x102] = saved })
		}()
		msg, _, err := catchUpStep{}.Run(ctx, x)
		require.NoError(t, err, "the stall outlasted the 300ms bound but not the budget")
		require.NotEmpty(t, msg)
		ev := events()
		require.Positive(t, phases(ev)[EventStalled], "the stall was reported")
		require.Equal(t, 1, phases(ev)[EventRecovered], "and its end")
		for _, e := range ev {
			require.Equal(t, StepCatchUp, e.Step)
			require.NotNil(t, e.Stall)
			require.Equal(t, uint64(0x102), e.Stall.MemberID)
			require.Equal(t, "m2", e.Stall.Member)
			require.Equal(t, time.Minute, e.Stall.Budget)
		}
	})
	t.Run("a voter silent past the budget", func(t *testing.T) {
		f := newFakeEtcd(3)
		replaced(f, true, 100)
		f.status[0x100] = nil // the leader
		x, ctx, events := stallRun(t, f, 2*time.Second)
		start := time.Now()
		_, _, err := catchUpStep{}.Run(ctx, x)
		require.ErrorIs(t, err, ErrStalled)
		require.NotErrorIs(t, err, ErrTimeout, "not a timeout of the new member: no rollback")
		var se *StalledError
		require.ErrorAs(t, err, &se)
		require.Equal(t, uint64(0x100), se.MemberID)
		require.Equal(t, StepCatchUp, se.Step)
		require.Equal(t, 2, se.Voters)
		require.Equal(t, 1, se.Learners)
		require.Equal(t, "ns/etcd-relocate", se.Checkpoint)
		require.Contains(t, se.Error(), "run Plan and Execute again")
		require.GreaterOrEqual(t, time.Since(start), 2*time.Second)
		require.Positive(t, phases(events())[EventStalled])
		require.Nil(t, x.rollback(ctx, StepCatchUp, err), "a stall is not rolled back")
	})
	t.Run("a learner that never started is not stalled", func(t *testing.T) {
		f := newFakeEtcd(3)
		replaced(f, true, 0)
		f.status[0x900] = nil
		x, ctx, events := stallRun(t, f, time.Second)
		_, _, err := catchUpStep{}.Run(ctx, x)
		require.ErrorIs(t, err, ErrTimeout, "the catch-up bound applies")
		require.Empty(t, events())
	})
	t.Run("the moved member is not watched", func(t *testing.T) {
		f := newFakeEtcd(3)
		f.status[0x101] = nil
		x, ctx, events := stallRun(t, f, time.Second)
		stalled, err := x.stall.check(ctx)
		require.NoError(t, err)
		require.False(t, stalled)
		require.Empty(t, events())
	})
}

// TestAddLearnerRemovedIDDecisions: etcd derives a member's ID from its
// peer URL and the second, and refuses an ID it removed ("member not
// found"). A learner removed and added again within one second (a
// misplaced pod moved at once) gets that answer; the add waits for the
// next second and gets a new ID. Here the IDs of this second and the next
// two were removed, so the add must get past "member not found" (before
// the fix it returned it).
func TestAddLearnerRemovedIDDecisions(t *testing.T) {
	f := newFakeEtcd(3)
	f.etcdIDs = true
	f.members = removeMember(f.members, 0x101)
	url := fakePeerURL(1)
	now := time.Now()
	f.removed = map[uint64]bool{}
	for i := range 3 {
		f.removed[etcdMemberID([]string{url}, now.Add(time.Duration(i)*time.Second))] = true
	}
	_, err := f.MemberAddAsLearner(context.Background(), []string{url})
	if time.Since(now) < time.Second {
		require.ErrorContains(t, err, "member not found", "the fake refuses a removed ID as etcd does")
	}
	m := &memberOps{api: f, one: f.one, log: slog.New(slog.DiscardHandler), bound: time.Minute, call: time.Second}
	id, err := m.addLearner(context.Background(), url, 0x101)
	require.NoError(t, err)
	require.False(t, f.removed[id], "a fresh ID")
	ml, err := f.MemberList(context.Background(), clientv3.WithSerializable())
	require.NoError(t, err)
	require.NotNil(t, byID(ml.Members, id))
	require.True(t, byID(ml.Members, id).IsLearner)
}
