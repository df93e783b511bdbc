package etcdrelocate

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
)

// ErrSnapshotCorrupt is returned when a snapshot's sha256 trailer does not
// match its content.
var ErrSnapshotCorrupt = errors.New("etcdrelocate: snapshot checksum mismatch")

// takeSnapshot streams a snapshot from the single member at endpoint to a
// new file in dir and checks the sha256 that etcd appends to the stream
// (the check etcdutl snapshot restore does). It returns the file's path and
// size. A partial file is removed. It reads the gRPC stream itself rather
// than through clientv3's pipe, which copies every byte once more.
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
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := pb.NewMaintenanceClient(cli.ActiveConnection()).Snapshot(sctx, &pb.SnapshotRequest{})
	if err != nil {
		return "", 0, fmt.Errorf("snapshot from %s: %w", endpoint, err)
	}
	th := &trailerHash{h: sha256.New()}
	w := bufio.NewWriterSize(f, 1<<20)
	var n int64
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", 0, fmt.Errorf("snapshot from %s after %d bytes: %w", endpoint, n, err)
		}
		if _, err := w.Write(resp.Blob); err != nil {
			return "", 0, fmt.Errorf("snapshot: %w", err)
		}
		th.Write(resp.Blob)
		n += int64(len(resp.Blob))
	}
	if !th.ok() {
		return "", 0, fmt.Errorf("%w: %d bytes from %s", ErrSnapshotCorrupt, n, endpoint)
	}
	if err := w.Flush(); err != nil {
		return "", 0, fmt.Errorf("snapshot: %w", err)
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
	syncDir(dir)
	return path, n, nil
}

// syncDir makes a rename in dir durable, where the platform allows.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

// bgSnapshot is a snapshot streaming in the background while the steps
// run. Its result is read only after done is closed.
type bgSnapshot struct {
	src  string
	done chan struct{}
	path string
	n    int64
	err  error
}

func startSnapshot(ctx context.Context, conn *connector, endpoint, dir, name, src string) *bgSnapshot {
	b := &bgSnapshot{src: src, done: make(chan struct{})}
	go func() {
		defer close(b.done)
		b.path, b.n, b.err = takeSnapshot(ctx, conn, endpoint, dir, name)
	}()
	return b
}

func defaultSnapshotDir() string { return os.TempDir() }

// snapshotName is the snapshot file's name, without the extension.
func snapshotName(p *Plan) string {
	return fmt.Sprintf("etcd-%s-%s-%s", p.Namespace, p.Cluster, time.Now().UTC().Format("20060102T150405Z"))
}

// collectSnapshot records the background snapshot if it has finished; it
// does not wait.
func (x *run) collectSnapshot(ctx context.Context) {
	if x.snap == nil {
		return
	}
	select {
	case <-x.snap.done:
		_ = finishSnapshot(ctx, x)
	default:
	}
}

// joinSnapshot waits for the background snapshot, unless ctx ends first,
// and records it.
func (x *run) joinSnapshot(ctx context.Context) {
	if x.snap == nil {
		return
	}
	select {
	case <-x.snap.done:
		_ = finishSnapshot(ctx, x)
	case <-ctx.Done():
	}
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

// snapshotSource picks a healthy voter other than the moved member: a
// follower where there is one (the leader streams the learner's data
// later), the most up-to-date among equals.
func snapshotSource(ctx context.Context, x *run) (*pb.Member, error) {
	ms, err := x.mem.list(ctx)
	if err != nil {
		return nil, err
	}
	sts := x.mem.voterStatuses(ctx, ms, x.p.Member.ID)
	leader := agreedLeader(sts)
	var src *pb.Member
	for _, m := range ms {
		st := sts[m.ID]
		if st == nil || len(st.Errors) > 0 || m.ID == x.p.Member.ID {
			continue
		}
		switch {
		case src == nil, src.ID == leader && m.ID != leader:
			src = m
		case (src.ID == leader) == (m.ID == leader) && st.RaftAppliedIndex > sts[src.ID].RaftAppliedIndex:
			src = m
		}
	}
	if src == nil {
		return nil, fmt.Errorf("%w: no healthy voter to take the snapshot from", ErrQuorumAtRisk)
	}
	return src, nil
}

// recordSnapshot records a verified snapshot in the result and the
// checkpoint.
func recordSnapshot(ctx context.Context, x *run, path string, n int64) error {
	x.res.SnapshotPath, x.res.SnapshotBytes = path, n
	x.cp.SnapshotPath = path
	if err := x.saveCheckpoint(ctx); err != nil {
		return fmt.Errorf("record the snapshot: %w", err)
	}
	x.r.log.Info("snapshot verified", "path", path, "bytes", n)
	return nil
}

// finishSnapshot records the finished background snapshot. A failed one
// is logged and dropped: release-volume takes the snapshot again before
// the old volume goes.
func finishSnapshot(ctx context.Context, x *run) error {
	b := x.snap
	x.snap = nil
	if b.err != nil {
		x.r.log.Warn("the background snapshot failed; it is taken again before the old volume goes", "source", b.src, "err", b.err)
		return b.err
	}
	if err := recordSnapshot(ctx, x, b.path, b.n); err != nil {
		x.r.log.Warn("could not record the snapshot", "path", b.path, "err", err)
		return err
	}
	return nil
}
