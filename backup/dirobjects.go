package backup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"strings"
)

// DirObjects is an ObjectStore over a directory holding a copy of a
// bucket (`rclone sync`, `aws s3 sync s3://<bucket> <dir>`): object
// <key> is the file <root>/<key>, '/' separating folders. Keys and
// prefixes that would leave the root are refused (a *KeyError), and so is
// any symbolic link leading out of it. Read errors other than a missing
// file are returned by Verify, not reported as problems.
type DirObjects struct {
	root *os.Root
	dir  string
}

// NewDirObjects opens dir as an ObjectStore. The directory stays open
// until Close.
func NewDirObjects(dir string) (*DirObjects, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: object directory: %w", ErrInvalidConfig, err)
	}
	return &DirObjects{root: root, dir: dir}, nil
}

// Close closes the directory.
func (d *DirObjects) Close() error { return d.root.Close() }

// String returns the directory.
func (d *DirObjects) String() string { return d.dir }

// checkKey refuses keys that are not local '/'-separated paths.
func checkKey(key string) error {
	if strings.Contains(key, `\`) {
		return &KeyError{Key: key, Reason: "holds a backslash"}
	}
	if !fs.ValidPath(key) {
		return &KeyError{Key: key, Reason: `absolute, or with "..", "." or empty elements`}
	}
	return nil
}

// folder maps a prefix ("" or ending in '/') to a directory of the root.
func folder(prefix string) (string, error) {
	if prefix == "" {
		return ".", nil
	}
	if !strings.HasSuffix(prefix, "/") {
		return "", &KeyError{Key: prefix, Reason: "a prefix is empty or ends with '/'"}
	}
	dir := strings.TrimSuffix(prefix, "/")
	return dir, checkKey(dir)
}

// Folders lists the subdirectories of prefix's directory.
func (d *DirObjects) Folders(ctx context.Context, prefix string) ([]string, error) {
	dir, err := folder(prefix)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	entries, err := fs.ReadDir(d.root.FS(), dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out, nil
}

// List walks prefix's directory; regular files are objects, other files
// are skipped.
func (d *DirObjects) List(ctx context.Context, prefix string) ([]Object, error) {
	dir, err := folder(prefix)
	if err != nil {
		return nil, err
	}
	var out []Object
	err = fs.WalkDir(d.root.FS(), dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if !e.Type().IsRegular() {
			return nil
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		// WalkDir joins names onto dir with path.Join: p is the key.
		out = append(out, Object{Key: p, Name: strings.TrimPrefix(p, prefix), Size: info.Size(), LastModified: info.ModTime()})
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) && len(out) == 0 {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Open opens file <root>/<key>.
func (d *DirObjects) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, err := d.root.Open(key)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &ObjectNotFoundError{Where: d.dir, Key: key}
	}
	if err != nil {
		return nil, err
	}
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		f.Close()
		return nil, &ObjectNotFoundError{Where: d.dir, Key: key}
	}
	return f, nil
}
