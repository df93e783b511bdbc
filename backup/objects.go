package backup

import (
	"context"
	"fmt"
	"io"
	"time"
)

// ObjectStore is where a Store reads a backup storage location's objects:
// an S3 bucket (NewS3Objects), a copy of one on disk (NewDirObjects) or,
// in tests, memory (backuptest.MemObjects). Keys are '/'-separated, as in
// S3. Implementations are safe for concurrent use.
type ObjectStore interface {
	// Folders returns the names of the folders directly under prefix
	// ("" or a key ending in '/'), sorted.
	Folders(ctx context.Context, prefix string) ([]string, error)
	// List returns every object under prefix ("" or a key ending in '/'),
	// at any depth, with Name relative to prefix, sorted by Name. An
	// empty or absent folder lists as no objects.
	List(ctx context.Context, prefix string) ([]Object, error)
	// Open starts reading object key. A missing object is an
	// *ObjectNotFoundError (ErrNotFound).
	Open(ctx context.Context, key string) (io.ReadCloser, error)
}

// Object describes one object of an ObjectStore.
type Object struct {
	// Key is the full object key.
	Key string
	// Name is the key relative to the listed prefix (in
	// VerifyReport.Files, the file name inside the backup's folder).
	Name string
	// Size is the object's size in bytes.
	Size int64
	// LastModified is when the object was last written.
	LastModified time.Time
}

// ObjectNotFoundError is an object an ObjectStore does not hold.
type ObjectNotFoundError struct {
	// Where names the store (s3://bucket, a directory, memory).
	Where string
	// Key is the missing object's key.
	Key string
}

func (e *ObjectNotFoundError) Error() string {
	return fmt.Sprintf("backup: object %s not found in %s", e.Key, e.Where)
}

// Is makes errors.Is(err, ErrNotFound) true.
func (e *ObjectNotFoundError) Is(target error) bool { return target == ErrNotFound }

// KeyError is an object key or prefix an ObjectStore refuses: one that
// would leave a directory store's root (absolute, "..", "." or empty
// elements, a backslash).
type KeyError struct {
	// Key is the refused key or prefix.
	Key string
	// Reason says why it is refused.
	Reason string
}

func (e *KeyError) Error() string {
	return fmt.Sprintf("backup: invalid object key %q: %s", e.Key, e.Reason)
}

// Is makes errors.Is(err, ErrInvalidKey) true.
func (e *KeyError) Is(target error) bool { return target == ErrInvalidKey }

// storeReader marks the read errors of an ObjectStore's object as
// failures to fetch (returned by Verify, not reported as problems), and
// stops with the context.
type storeReader struct {
	ctx context.Context
	rc  io.ReadCloser
}

func (r *storeReader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, &fetchError{err}
	}
	n, err := r.rc.Read(p)
	if err != nil && err != io.EOF {
		if _, ok := err.(*fetchError); !ok {
			err = &fetchError{err}
		}
	}
	return n, err
}

func (r *storeReader) Close() error { return r.rc.Close() }
