package etcdrelocate

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// timeline records when each phase of a wait was first seen.
type timeline struct {
	start time.Time
	names []string
	at    []time.Duration
}

func newTimeline() *timeline { return &timeline{start: time.Now()} }

// mark records phase name the first time it is seen.
func (t *timeline) mark(name string) {
	if slices.Contains(t.names, name) {
		return
	}
	t.names = append(t.names, name)
	t.at = append(t.at, time.Since(t.start))
}

func (t *timeline) String() string {
	parts := make([]string, len(t.names))
	for i, n := range t.names {
		parts[i] = fmt.Sprintf("%s +%s", n, t.at[i].Round(10*time.Millisecond))
	}
	return strings.Join(parts, ", ")
}

// relocateAgain undoes a misplaced start: it removes the new learner (a
// learner may always be removed), deletes the misplaced claim and pod, and
// adds the learner again, so that the next claim can be pinned. It gives up
// after two attempts.
func relocateAgain(ctx context.Context, x *run) error {
	x.misplaced++
	if x.misplaced > 2 {
		return fmt.Errorf("%w: the new pod keeps landing on another node than %s", ErrTargetNode, x.p.TargetNode)
	}
	x.r.log.Warn("new member placed on the wrong node; removing its learner and trying again", "attempt", x.misplaced)
	ms, err := x.mem.list(ctx)
	if err != nil {
		return err
	}
	if m := x.newMember(ms); m != nil {
		if !m.IsLearner {
			return fmt.Errorf("%w: the misplaced member %s is already a voter", ErrTargetNode, FormatID(m.ID))
		}
		if err := x.mem.remove(ctx, m.ID); err != nil {
			return err
		}
	}
	pvcUID, podUID, err := uids(ctx, x)
	if err != nil {
		return err
	}
	if err := holdAndDelete(ctx, x, pvcUID, podUID); err != nil {
		return err
	}
	_, _, err = addLearnerStep{}.Run(ctx, x)
	return err
}
