package backup

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/gzip"
	velerov1 "github.com/vmware-tanzu/velero/pkg/apis/velero/v1"
)

// Backup reads and decodes backup name's velero-backup.json from the
// bucket. Its status is the one Velero last uploaded: a backup is final in
// the bucket only once the phase is Completed, PartiallyFailed or Failed.
func (s *Store) Backup(ctx context.Context, name string) (*velerov1.Backup, error) {
	data, err := s.readAll(ctx, s.backupKey(name, metadataFile), maxJSONSize)
	if err != nil {
		return nil, fmt.Errorf("read backup %s: %w", name, err)
	}
	b, err := DecodeBackup(data)
	if err != nil {
		return nil, fmt.Errorf("read backup %s: %w", name, err)
	}
	return b, nil
}

// Logs returns backup name's log (<name>-logs.gz), decompressed. The
// caller closes it. Reading past corrupt data returns a gzip error.
func (s *Store) Logs(ctx context.Context, name string) (io.ReadCloser, error) {
	return s.openGzip(ctx, s.backupKey(name, logsFile(name)))
}

// RestoreLogs returns restore name's log (restore-<name>-logs.gz),
// decompressed. The caller closes it.
func (s *Store) RestoreLogs(ctx context.Context, name string) (io.ReadCloser, error) {
	return s.openGzip(ctx, s.key("restores", name, "restore-"+name+"-logs.gz"))
}

// Results reads backup name's errors and warnings (<name>-results.gz).
func (s *Store) Results(ctx context.Context, name string) (Results, error) {
	return s.results(ctx, s.backupKey(name, resultsFile(name)))
}

// RestoreResults reads restore name's errors and warnings
// (restore-<name>-results.gz).
func (s *Store) RestoreResults(ctx context.Context, name string) (Results, error) {
	return s.results(ctx, s.key("restores", name, "restore-"+name+"-results.gz"))
}

func (s *Store) results(ctx context.Context, key string) (Results, error) {
	rc, err := s.openGzip(ctx, key)
	if err != nil {
		return Results{}, err
	}
	defer rc.Close()
	res, err := DecodeResults(io.LimitReader(rc, maxJSONSize))
	if err != nil {
		return Results{}, fmt.Errorf("%s: %w", key, err)
	}
	return res, nil
}

// ResourceList reads backup name's list of backed-up items
// (<name>-resource-list.json.gz).
func (s *Store) ResourceList(ctx context.Context, name string) (ResourceList, error) {
	rc, err := s.openGzip(ctx, s.backupKey(name, resourceListFile(name)))
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	list, err := DecodeResourceList(rc)
	if err != nil {
		return nil, fmt.Errorf("backup %s: %w", name, err)
	}
	return list, nil
}

// openGzip opens key and checks that it starts as a gzip stream.
func (s *Store) openGzip(ctx context.Context, key string) (*gzipReadCloser, error) {
	r, err := s.open(ctx, key)
	if err != nil {
		return nil, err
	}
	zr, err := newGzipReader(r, key)
	if err != nil {
		r.Close()
		return nil, err
	}
	return &gzipReadCloser{gzipStream: zr, closer: r}, nil
}

type gzipReadCloser struct {
	*gzipStream
	closer io.Closer
}

func (g *gzipReadCloser) Close() error { return g.closer.Close() }

// gzipStream decompresses with klauspost/compress (compress/gzip's format
// and checks, faster), over a buffer that tells what follows the stream.
type gzipStream struct {
	*gzip.Reader
	br *bufio.Reader
}

// single stops the stream at the end of its first gzip member (by
// default concatenated members read as one stream, as gunzip does).
func (g *gzipStream) single() { g.Multistream(false) }

// more reports whether any byte follows the gzip member just read.
func (g *gzipStream) more() bool {
	_, err := g.br.Peek(1)
	return err == nil
}

var errNotGzip = errors.New("not gzip data")

// newGzipReader checks the gzip magic before decompressing, to report the
// classic S3 corruption (aws-chunked framing stored in the object) plainly.
func newGzipReader(r io.Reader, file string) (*gzipStream, error) {
	br := bufio.NewReaderSize(r, 256<<10)
	magic, err := br.Peek(2)
	if err != nil {
		return nil, &DecodeError{File: file, Err: fmt.Errorf("read gzip header: %w", err)}
	}
	if magic[0] != 0x1f || magic[1] != 0x8b {
		return nil, &DecodeError{File: file, Err: fmt.Errorf("%w (starts with %q; aws-chunked framing stored in the object looks like this)", errNotGzip, printable(magic))}
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		return nil, &DecodeError{File: file, Err: err}
	}
	return &gzipStream{Reader: zr, br: br}, nil
}

func printable(b []byte) string {
	out := make([]byte, len(b))
	for i, c := range b {
		if c < 0x20 || c > 0x7e {
			c = '.'
		}
		out[i] = c
	}
	return string(out)
}
