package etcdrelocate

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
)

// ErrSnapshotCorrupt is returned when a snapshot's sha256 trailer does not
// match its content.
var ErrSnapshotCorrupt = errors.New("etcdrelocate: snapshot checksum mismatch")

// snapshotFile is a snapshot on disk that verified: its path, size and
// the SHA-256 of the whole file (hex), as the checkpoint records them.
type snapshotFile struct {
	path   string
	bytes  int64
	sha256 string
}

// takeSnapshot streams a snapshot from the single member at endpoint to a
// new file in dir and checks the sha256 that etcd appends to the stream
// (the check etcdutl snapshot restore does). It returns the file's path,
// size and digest. A partial file is removed. It reads the gRPC stream
// itself rather than through clientv3's pipe, which copies every byte once
// more.
func takeSnapshot(ctx context.Context, conn *connector, endpoint, dir, name string) (snapshotFile, error) {
	path, n, sum, err := streamSnapshot(ctx, conn, endpoint, dir, name)
	return snapshotFile{path: path, bytes: n, sha256: sum}, err
}

func streamSnapshot(ctx context.Context, conn *connector, endpoint, dir, name string) (string, int64, string, error) {
	cli, err := conn.client(endpoint)
	if err != nil {
		return "", 0, "", err
	}
	defer cli.Close()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", 0, "", fmt.Errorf("snapshot: %w", err)
	}
	f, err := os.CreateTemp(dir, name+"-*.db.part")
	if err != nil {
		return "", 0, "", fmt.Errorf("snapshot: %w", err)
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
		return "", 0, "", fmt.Errorf("snapshot from %s: %w", endpoint, err)
	}
	th, whole := &trailerHash{h: sha256.New()}, sha256.New()
	w := bufio.NewWriterSize(f, 1<<20)
	var n int64
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", 0, "", fmt.Errorf("snapshot from %s after %d bytes: %w", endpoint, n, err)
		}
		if _, err := w.Write(resp.Blob); err != nil {
			return "", 0, "", fmt.Errorf("snapshot: %w", err)
		}
		th.Write(resp.Blob)
		whole.Write(resp.Blob)
		n += int64(len(resp.Blob))
	}
	if !th.ok() {
		return "", 0, "", fmt.Errorf("%w: %d bytes from %s", ErrSnapshotCorrupt, n, endpoint)
	}
	if err := w.Flush(); err != nil {
		return "", 0, "", fmt.Errorf("snapshot: %w", err)
	}
	if err := f.Sync(); err != nil {
		return "", 0, "", fmt.Errorf("snapshot: %w", err)
	}
	if err := f.Close(); err != nil {
		return "", 0, "", fmt.Errorf("snapshot: %w", err)
	}
	path, err := publishSnapshot(f.Name(), dir, name)
	if err != nil {
		return "", 0, "", fmt.Errorf("snapshot: %w", err)
	}
	done = true
	syncDir(dir)
	return path, n, hex.EncodeToString(whole.Sum(nil)), nil
}

// publishSnapshot gives the finished file part its name in dir, never
// replacing a file that is there (a snapshot taken again within the same
// second, as a resume does for a damaged one, gets name-2.db): a hard link,
// which fails where the name exists, then the part's removal.
func publishSnapshot(part, dir, name string) (string, error) {
	for i := 1; ; i++ {
		path := filepath.Join(dir, name+".db")
		if i > 1 {
			path = filepath.Join(dir, fmt.Sprintf("%s-%d.db", name, i))
		}
		err := os.Link(part, path)
		if errors.Is(err, fs.ErrExist) && i < 100 {
			continue
		}
		if err != nil {
			return "", err
		}
		_ = os.Remove(part) // the deferred cleanup tries again
		return path, nil
	}
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
	file snapshotFile
	err  error
}

func startSnapshot(ctx context.Context, conn *connector, endpoint, dir, name, src string) *bgSnapshot {
	b := &bgSnapshot{src: src, done: make(chan struct{})}
	go func() {
		defer close(b.done)
		b.file, b.err = takeSnapshot(ctx, conn, endpoint, dir, name)
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
func recordSnapshot(ctx context.Context, x *run, f snapshotFile) error {
	x.res.SnapshotPath, x.res.SnapshotBytes = f.path, f.bytes
	x.cp.SnapshotPath, x.cp.SnapshotBytes, x.cp.SnapshotSHA256 = f.path, f.bytes, f.sha256
	if err := x.saveCheckpoint(ctx); err != nil {
		return fmt.Errorf("record the snapshot: %w", err)
	}
	x.r.log.Info("snapshot verified", "path", f.path, "bytes", f.bytes, "sha256", f.sha256)
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
	if err := recordSnapshot(ctx, x, b.file); err != nil {
		x.r.log.Warn("could not record the snapshot", "path", b.file.path, "err", err)
		return err
	}
	return nil
}

// checkSnapshotFile reports why the snapshot file cp records cannot be
// relied on, nil if it can: it is a regular file with the size and the
// SHA-256 recorded when it verified.
func checkSnapshotFile(cp *Checkpoint) error {
	if cp.SnapshotSHA256 == "" {
		return errors.New("the checkpoint records no size and SHA-256 for it")
	}
	f, err := os.Open(cp.SnapshotPath)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	switch {
	case err != nil:
		return err
	case !st.Mode().IsRegular():
		return fmt.Errorf("%s is not a regular file", cp.SnapshotPath)
	case st.Size() != cp.SnapshotBytes:
		return fmt.Errorf("%d bytes, %d recorded", st.Size(), cp.SnapshotBytes)
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != cp.SnapshotSHA256 {
		return fmt.Errorf("SHA-256 %s, %s recorded", got, cp.SnapshotSHA256)
	}
	return nil
}

// proveSnapshot re-proves the snapshot the checkpoint records before a run
// relies on it. A file that still matches is reported in the result (with
// its size); otherwise the record is dropped, in the checkpoint too, so
// that the snapshot is taken again, and why is returned.
func proveSnapshot(ctx context.Context, x *run) (string, error) {
	if x.cp.SnapshotPath == "" {
		return "", nil
	}
	cerr := checkSnapshotFile(x.cp)
	if cerr == nil {
		x.res.SnapshotPath, x.res.SnapshotBytes = x.cp.SnapshotPath, x.cp.SnapshotBytes
		return "", nil
	}
	why := fmt.Sprintf("the recorded snapshot %s cannot be relied on (%v)", x.cp.SnapshotPath, cerr)
	x.r.log.Warn("the recorded snapshot cannot be relied on; it is taken again", "path", x.cp.SnapshotPath, "reason", cerr)
	x.cp.SnapshotPath, x.cp.SnapshotBytes, x.cp.SnapshotSHA256 = "", 0, ""
	x.res.SnapshotPath, x.res.SnapshotBytes = "", 0
	if err := x.saveCheckpoint(ctx); err != nil {
		return "", fmt.Errorf("drop the record of the unusable snapshot: %w", err)
	}
	return why, nil
}
