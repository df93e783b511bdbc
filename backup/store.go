package backup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
)

// StoreConfig configures a Store. Objects is required.
type StoreConfig struct {
	// Objects is where the backup storage location lives: an S3 bucket
	// (NewS3Objects), a copy of one on disk (NewDirObjects), or memory
	// in tests (backuptest.MemObjects).
	Objects ObjectStore
	// Prefix is the backup storage location's prefix inside the bucket.
	// Default: the bucket root.
	Prefix string
}

// Store reads Velero's backups straight from the bucket (or a copy of
// it): no Velero server and no DownloadRequest are involved. It never
// writes or deletes anything. Its methods are safe for concurrent use.
type Store struct {
	objects ObjectStore
	prefix  string
}

// NewStore validates cfg and returns a Store. It does no I/O.
func NewStore(cfg StoreConfig) (*Store, error) {
	if cfg.Objects == nil {
		return nil, fmt.Errorf("%w: store needs Objects (NewS3Objects, NewDirObjects)", ErrInvalidConfig)
	}
	if err := ValidatePrefix(cfg.Prefix); err != nil {
		return nil, err
	}
	return &Store{objects: cfg.Objects, prefix: cfg.Prefix}, nil
}

// key joins the prefix and parts into an object key.
func (s *Store) key(parts ...string) string {
	if s.prefix != "" {
		parts = append([]string{s.prefix}, parts...)
	}
	return path.Join(parts...)
}

// backupKey returns the key of file in backup name's folder.
func (s *Store) backupKey(name, file string) string { return s.key("backups", name, file) }

// ListBackups returns the names of the backups in the bucket (the folders
// under <prefix>/backups/), sorted. It lists with a delimiter, so it costs
// one request per 1,000 backups and reads no backup's files.
//
// On SeaweedFS (what Cozystack runs) a deleted backup's folder stays listed
// until SeaweedFS removes empty folders, two minutes or more after the last
// object in it was deleted; Backup and Verify return ErrNotFound for it.
// Velero's own bucket listing sees the same folders.
func (s *Store) ListBackups(ctx context.Context) ([]string, error) {
	folders, err := s.objects.Folders(ctx, s.key("backups")+"/")
	if err != nil {
		return nil, fmt.Errorf("list backups: %w", err)
	}
	return folders, nil
}

// CheckPrefix lists the top level of the location prefix and returns a
// *PrefixError (ErrInvalidPrefix) if it holds folders other than Velero's
// own (backups, restores, restic, metadata, plugins, kopia): Velero marks
// such a location Unavailable.
func (s *Store) CheckPrefix(ctx context.Context) error {
	root := ""
	if s.prefix != "" {
		root = s.prefix + "/"
	}
	folders, err := s.objects.Folders(ctx, root)
	if err != nil {
		return fmt.Errorf("check prefix: %w", err)
	}
	if foreign := ForeignFolders(folders); len(foreign) > 0 {
		return &PrefixError{Prefix: s.prefix, Foreign: foreign,
			Reason: "holds folders that are not Velero's (use a dedicated prefix)"}
	}
	return nil
}

// files lists the objects in backup name's folder, sorted by name. It
// returns ErrNotFound when the folder is empty.
func (s *Store) files(ctx context.Context, name string) ([]Object, error) {
	prefix := s.key("backups", name) + "/"
	out, err := s.objects.List(ctx, prefix)
	if err != nil {
		return nil, fmt.Errorf("list files of %s: %w", name, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: backup %s has no files under %s", ErrNotFound, name, prefix)
	}
	return out, nil
}

// open starts reading key. Failures other than a missing object, on
// opening or reading, are *fetchError: about reaching the store, not
// about the backup's bytes.
func (s *Store) open(ctx context.Context, key string) (io.ReadCloser, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rc, err := s.objects.Open(ctx, key)
	switch {
	case errors.Is(err, ErrNotFound):
		return nil, err
	case err != nil:
		var fe *fetchError
		if !errors.As(err, &fe) {
			err = &fetchError{fmt.Errorf("open %s: %w", key, err)}
		}
		return nil, err
	}
	return &storeReader{ctx: ctx, rc: rc}, nil
}

// readAll reads a small object whole.
func (s *Store) readAll(ctx context.Context, key string, limit int64) ([]byte, error) {
	r, err := s.open(ctx, key)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", key, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%w: %s is larger than %d bytes", ErrMalformed, key, limit)
	}
	return data, nil
}
