package backup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"
)

// VerifyFS is Verify for a backup's folder copied out of the bucket (for
// example with `aws s3 sync s3://<bucket>/backups/<name> <dir>`, then
// os.DirFS(dir)): fsys holds velero-backup.json, <name>.tar.gz and the
// other files at its root. It makes the same checks and returns the same
// report; errors reading fsys other than a missing file are returned, not
// reported as problems.
func VerifyFS(ctx context.Context, fsys fs.FS, name string, opts VerifyOptions) (*VerifyReport, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("verify %s: %w", name, err)
	}
	var files []Object
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if err != nil {
			return nil, fmt.Errorf("verify %s: %w", name, err)
		}
		files = append(files, Object{Key: e.Name(), Name: e.Name(), Size: info.Size(), LastModified: info.ModTime()})
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%w: backup %s has no files", ErrNotFound, name)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	v := &verification{name: name, rep: &VerifyReport{Backup: name}, set: newItemSet(),
		open: func(ctx context.Context, file string) (io.ReadCloser, error) {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			f, err := fsys.Open(file)
			switch {
			case errors.Is(err, fs.ErrNotExist):
				return nil, fmt.Errorf("%w: %s", ErrNotFound, file)
			case err != nil:
				return nil, &fetchError{err}
			}
			return &fsFile{ctx: ctx, f: f}, nil
		}}
	return v.run(ctx, files, opts)
}

// fsFile reads a file of a VerifyFS folder: its read errors are failures
// to read the copy (returned), and it stops with the context.
type fsFile struct {
	ctx context.Context
	f   fs.File
}

func (f *fsFile) Read(p []byte) (int, error) {
	if err := f.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := f.f.Read(p)
	if err != nil && err != io.EOF {
		err = &fetchError{err}
	}
	return n, err
}

func (f *fsFile) Close() error { return f.f.Close() }
