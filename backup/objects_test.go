package backup_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cozystack/tenantkit/backup"
	"github.com/cozystack/tenantkit/backup/backuptest"
	"github.com/cozystack/tenantkit/localenv"
)

// objectsFixture is the content every ObjectStore implementation is
// loaded with before the behaviour table runs.
var objectsFixture = map[string]string{
	"backups/a/velero-backup.json": "{}",
	"backups/a/a.tar.gz":           "archive",
	"backups/b/sub/deep":           "deep",
	"restores/r/log":               "log",
	"top":                          "top",
}

// objectStores returns each ObjectStore implementation holding
// objectsFixture: memory and a directory always, versitygw's S3 unless
// -short.
func objectStores(t *testing.T) map[string]backup.ObjectStore {
	ctx := context.Background()
	mem := &backuptest.MemObjects{}
	dir := t.TempDir()
	for k, v := range objectsFixture {
		mem.Put(k, []byte(v))
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, k)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, k), []byte(v), 0o644))
	}
	// A symbolic link out of the root must not be followed.
	outside := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(outside, []byte("secret"), 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "escape")))
	d, err := backup.NewDirObjects(dir)
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	stores := map[string]backup.ObjectStore{"memory": mem, "dir": d}
	if !testing.Short() {
		e := startS3(t, localenv.Config{SkipAPIServer: true})
		for k, v := range objectsFixture {
			require.NoError(t, e.bucket.PutObject(ctx, k, []byte(v)))
		}
		o, err := backup.NewS3Objects(backup.S3Config{Credentials: e.creds, CACertPEM: e.s3.CAPEM})
		require.NoError(t, err)
		stores["s3"] = o
	}
	return stores
}

// TestObjectStores runs the same behaviour table against every
// implementation.
func TestObjectStores(t *testing.T) {
	ctx := context.Background()
	for impl, o := range objectStores(t) {
		t.Run(impl, func(t *testing.T) {
			folders := []struct {
				prefix string
				want   []string
			}{
				{"", []string{"backups", "restores"}},
				{"backups/", []string{"a", "b"}},
				{"backups/b/", []string{"sub"}},
				{"none/", nil},
			}
			for _, tt := range folders {
				got, err := o.Folders(ctx, tt.prefix)
				require.NoError(t, err, tt.prefix)
				require.Equal(t, tt.want, got, "folders of %q", tt.prefix)
			}
			lists := []struct {
				prefix string
				want   []string // names
			}{
				{"backups/a/", []string{"a.tar.gz", "velero-backup.json"}},
				{"backups/", []string{"a/a.tar.gz", "a/velero-backup.json", "b/sub/deep"}},
				{"none/", nil},
			}
			for _, tt := range lists {
				got, err := o.List(ctx, tt.prefix)
				require.NoError(t, err, tt.prefix)
				var names []string
				for _, obj := range got {
					names = append(names, obj.Name)
					require.Equal(t, tt.prefix+obj.Name, obj.Key)
					require.Equal(t, int64(len(objectsFixture[obj.Key])), obj.Size, obj.Key)
				}
				require.Equal(t, tt.want, names, "list of %q", tt.prefix)
			}
			rc, err := o.Open(ctx, "backups/b/sub/deep")
			require.NoError(t, err)
			data, err := io.ReadAll(rc)
			require.NoError(t, err)
			require.NoError(t, rc.Close())
			require.Equal(t, "deep", string(data))

			for _, key := range []string{"backups/a/missing", "nothing", "backups/a"} {
				_, err = o.Open(ctx, key)
				var nf *backup.ObjectNotFoundError
				require.ErrorAs(t, err, &nf, key)
				require.ErrorIs(t, err, backup.ErrNotFound)
				require.Equal(t, key, nf.Key)
			}
		})
	}
}

// TestDirObjects_refusesEscapes checks that no key or prefix reads
// outside the directory.
func TestDirObjects_refusesEscapes(t *testing.T) {
	ctx := context.Background()
	d := objectStores(t)["dir"]
	for _, key := range []string{"../secret", "/etc/passwd", "backups/../../x", `backups\a`, "a//b", "./top", ""} {
		_, err := d.Open(ctx, key)
		require.ErrorIs(t, err, backup.ErrInvalidKey, key)
		var ke *backup.KeyError
		require.ErrorAs(t, err, &ke, key)
	}
	_, err := d.Open(ctx, "escape") // a symbolic link out of the root
	require.Error(t, err)
	require.NotErrorIs(t, err, backup.ErrInvalidConfig)
	for _, prefix := range []string{"../", "/", "backups"} {
		_, err := d.List(ctx, prefix)
		require.ErrorIs(t, err, backup.ErrInvalidKey, prefix)
		_, err = d.Folders(ctx, prefix)
		require.ErrorIs(t, err, backup.ErrInvalidKey, prefix)
	}
	_, err = backup.NewDirObjects(filepath.Join(t.TempDir(), "absent"))
	require.ErrorIs(t, err, backup.ErrInvalidConfig)
}

// TestStore_overEveryObjectStore reads and verifies one backup through
// each implementation.
func TestStore_overEveryObjectStore(t *testing.T) {
	ctx := context.Background()
	spec := backuptest.Spec{Name: "nightly", ConfigMaps: 4}
	mem := &backuptest.MemObjects{}
	require.NoError(t, mem.PutBackup(spec))
	files, err := spec.Files()
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "backups", "nightly"), 0o755))
	for f, data := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "backups", "nightly", f), data, 0o644))
	}
	d, err := backup.NewDirObjects(dir)
	require.NoError(t, err)
	defer d.Close()
	for impl, o := range map[string]backup.ObjectStore{"memory": mem, "dir": d} {
		t.Run(impl, func(t *testing.T) {
			s, err := backup.NewStore(backup.StoreConfig{Objects: o})
			require.NoError(t, err)
			names, err := s.ListBackups(ctx)
			require.NoError(t, err)
			require.Equal(t, []string{"nightly"}, names)
			rep, err := s.Verify(ctx, "nightly", backup.VerifyOptions{})
			require.NoError(t, err)
			require.True(t, rep.OK())
			require.Equal(t, spec.Items(), rep.Items)
			_, err = s.Verify(ctx, "absent", backup.VerifyOptions{})
			require.ErrorIs(t, err, backup.ErrNotFound)
			require.NoError(t, s.CheckPrefix(ctx))
		})
	}
	_, err = backup.NewStore(backup.StoreConfig{})
	require.ErrorIs(t, err, backup.ErrInvalidConfig)
}

// FuzzDirObjects_key checks that no key or prefix, however formed, panics
// or reads a file outside the directory: a key is refused (ErrInvalidKey),
// missing (ErrNotFound), or names a file under the root.
func FuzzDirObjects_key(f *testing.F) {
	for _, seed := range []string{"top", "backups/a/a.tar.gz", "../x", "/etc/passwd", "a/../b", `a\b`, "", "./", "backups/", "escape"} {
		f.Add(seed)
	}
	dir := f.TempDir()
	require.NoError(f, os.MkdirAll(filepath.Join(dir, "backups", "a"), 0o755))
	require.NoError(f, os.WriteFile(filepath.Join(dir, "top"), []byte("top"), 0o644))
	require.NoError(f, os.WriteFile(filepath.Join(dir, "backups", "a", "a.tar.gz"), []byte("archive"), 0o644))
	require.NoError(f, os.Symlink("/etc/passwd", filepath.Join(dir, "escape")))
	d, err := backup.NewDirObjects(dir)
	require.NoError(f, err)
	f.Cleanup(func() { d.Close() })
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, key string) {
		rc, err := d.Open(ctx, key)
		if err == nil {
			data, err := io.ReadAll(rc)
			rc.Close()
			require.NoError(t, err)
			require.Contains(t, []string{"top", "archive"}, string(data), key)
		}
		objs, err := d.List(ctx, key)
		if err == nil {
			for _, o := range objs {
				require.True(t, filepath.IsLocal(o.Key), o.Key)
			}
		}
		_, _ = d.Folders(ctx, key)
	})
}
