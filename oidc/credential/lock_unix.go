//go:build unix

package credential

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// lockPoll is how often a waiting process retries the lock.
const lockPoll = 50 * time.Millisecond

// fileLock is an exclusive flock(2) on a file of the cache directory. The
// kernel drops it when the process dies, so a crash never leaves it held.
type fileLock struct{ f *os.File }

// lock takes the inter-process lock of path, waiting until it is free or
// ctx ends.
func lock(ctx context.Context, path string) (*fileLock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("credential: lock: %w", err)
	}
	t := time.NewTicker(lockPoll)
	defer t.Stop()
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return &fileLock{f: f}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("credential: lock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("%w: waiting for another sign-in to finish: %v", ErrInterrupted, context.Cause(ctx))
		case <-t.C:
		}
	}
}

// unlock releases the lock.
func (l *fileLock) unlock() error { return l.f.Close() }

// owner returns the uid owning fi.
func owner(fi os.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}
