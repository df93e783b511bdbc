//go:build !unix

package credential

import (
	"context"
	"errors"
	"os"
)

type fileLock struct{}

// lock is not implemented off Unix: Get needs flock(2).
func lock(context.Context, string) (*fileLock, error) {
	return nil, errors.New("credential: the token cache lock needs a Unix system")
}

func (l *fileLock) unlock() error { return nil }

func owner(os.FileInfo) (int, bool) { return 0, false }
