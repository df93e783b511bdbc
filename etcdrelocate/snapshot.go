package etcdrelocate

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
)

// ErrSnapshotCorrupt is returned when a snapshot's sha256 trailer does not
// match its content.
var ErrSnapshotCorrupt = errors.New("etcdrelocate: snapshot checksum mismatch")

// takeSnapshot streams a snapshot from the single member at endpoint to a
// new file in dir and checks the sha256 that etcd appends to the stream
// (the check etcdutl snapshot restore does). It returns the file's path and
// size. A partial file is removed.
func takeSnapshot(ctx context.Context, conn *connector, endpoint, dir, name string) (string, int64, error) {
	cli, err := conn.client(endpoint)
	if err != nil {
		return "", 0, err
	}
	defer cli.Close()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", 0, fmt.Errorf("snapshot: %w", err)
	}
	f, err := os.CreateTemp(dir, name+"-*.db.part")
	if err != nil {
		return "", 0, fmt.Errorf("snapshot: %w", err)
	}
	done := false
	defer func() {
		if !done {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	resp, err := cli.SnapshotWithVersion(ctx)
	if err != nil {
		return "", 0, fmt.Errorf("snapshot from %s: %w", endpoint, err)
	}
	defer resp.Snapshot.Close()
	th := &trailerHash{h: sha256.New()}
	n, err := io.Copy(io.MultiWriter(f, th), resp.Snapshot)
	if err != nil {
		return "", 0, fmt.Errorf("snapshot from %s: %w", endpoint, err)
	}
	if !th.ok() {
		return "", 0, fmt.Errorf("%w: %d bytes from %s", ErrSnapshotCorrupt, n, endpoint)
	}
	if err := f.Sync(); err != nil {
		return "", 0, fmt.Errorf("snapshot: %w", err)
	}
	if err := f.Close(); err != nil {
		return "", 0, fmt.Errorf("snapshot: %w", err)
	}
	path := filepath.Join(dir, name+".db")
	if err := os.Rename(f.Name(), path); err != nil {
		return "", 0, fmt.Errorf("snapshot: %w", err)
	}
	done = true
	return path, n, nil
}

// trailerHash hashes everything written to it except the last 32 bytes,
// which it keeps to compare with the hash.
type trailerHash struct {
	h    hash.Hash
	tail []byte
}

func (t *trailerHash) Write(p []byte) (int, error) {
	if len(p) >= sha256.Size {
		t.h.Write(t.tail)
		t.h.Write(p[:len(p)-sha256.Size])
		t.tail = append(t.tail[:0], p[len(p)-sha256.Size:]...)
		return len(p), nil
	}
	buf := append(append([]byte(nil), t.tail...), p...)
	if over := len(buf) - sha256.Size; over > 0 {
		t.h.Write(buf[:over])
		buf = buf[over:]
	}
	t.tail = buf
	return len(p), nil
}

func (t *trailerHash) ok() bool {
	return len(t.tail) == sha256.Size && bytes.Equal(t.h.Sum(nil), t.tail)
}
