package etcdrelocate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// transient reports whether err may clear up by itself: "unhealthy
// cluster" (strict reconfig check within 5 s of a reconnect), no leader, a
// leader change, timeouts and unavailable endpoints. A transient error on a
// membership RPC also leaves its outcome unknown.
func transient(err error) bool {
	if errors.Is(err, ErrStalled) {
		return false
	}
	for _, e := range []error{rpctypes.ErrUnhealthy, rpctypes.ErrNoLeader, rpctypes.ErrNotLeader, rpctypes.ErrLeaderChanged,
		rpctypes.ErrStopped, rpctypes.ErrTimeout, rpctypes.ErrTimeoutDueToLeaderFail, rpctypes.ErrTimeoutDueToConnectionLost,
		rpctypes.ErrTimeoutWaitAppliedIndex, rpctypes.ErrNotCapable, context.DeadlineExceeded} {
		if errors.Is(err, e) {
			return true
		}
	}
	var k keepTrying
	if errors.As(err, &k) {
		return true
	}
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded:
		return true
	}
	return false
}

// keepTrying marks an error retry should retry (a condition not met yet).
type keepTrying struct{ error }

func (k keepTrying) Unwrap() error { return k.error }

// Poll intervals of retry: the first retry comes after pollMin, then the
// interval doubles up to pollMax. Waits on Kubernetes objects also wake on
// watch events (retryWake), so pollMax only bounds how late a change that
// no event announces is seen.
const (
	pollMin = 50 * time.Millisecond
	pollMax = 500 * time.Millisecond
)

// retry calls attempt until it reports done, returns a non-transient error,
// the bound passes (ErrTimeout, wrapping the last error) or ctx ends.
// It consults w as retryWake says (a nil w: none).
func (w *stallWatch) retry(ctx context.Context, bound time.Duration, what string, attempt func(ctx context.Context) (bool, error)) error {
	return retryWake(ctx, w, bound, what, nil, attempt)
}

// retryWake is retryWake that consults w (a nil w: none).
func (w *stallWatch) retryWake(ctx context.Context, bound time.Duration, what string, wake <-chan struct{}, attempt func(ctx context.Context) (bool, error)) error {
	return retryWake(ctx, w, bound, what, wake, attempt)
}

// retryWake is retry that also tries again as soon as wake delivers (a
// watch event on the objects the attempt reads). With a stallWatch sw (a
// run's waits), an attempt that did not succeed also asks it whether a member has
// stopped answering: time spent while one has does not count against
// bound, and a stall past the budget ends the wait with its *StalledError.
func retryWake(ctx context.Context, sw *stallWatch, bound time.Duration, what string, wake <-chan struct{}, attempt func(ctx context.Context) (bool, error)) error {
	deadline := time.Now().Add(bound)
	wait := pollMin
	// last is when the previous check ended: while a member is stalled
	// the time since (attempt, check and the pause before) is added back.
	last := time.Now()
	for {
		done, err := attempt(ctx)
		if err == nil && done {
			if sw != nil {
				sw.settle(ctx)
			}
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil && !transient(err) {
			return err
		}
		if sw != nil {
			stalled, serr := sw.check(ctx)
			if serr != nil {
				return serr
			}
			if stalled {
				deadline = deadline.Add(time.Since(last))
			}
			last = time.Now()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: %s after %s: %w", ErrTimeout, what, bound, lastErr(err))
		}
		t := time.NewTimer(min(wait, time.Until(deadline)+time.Millisecond))
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		case <-wake:
			t.Stop()
		}
		wait = min(wait*2, pollMax)
	}
}

// errConditionNotMet is the last error of a wait whose condition never held
// and that saw no error.
var errConditionNotMet = errors.New("etcdrelocate: condition not met")

func lastErr(err error) error {
	if err == nil {
		return errConditionNotMet
	}
	return err
}
