package backup_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cozystack/tenantkit/backup"
	"github.com/cozystack/tenantkit/backup/backuptest"
	"github.com/cozystack/tenantkit/localenv"
)

func TestStore_readsAndVerifiesBackups(t *testing.T) {
	e := startS3(t, localenv.Config{SkipAPIServer: true})
	ctx := context.Background()
	spec := backuptest.Spec{Name: "nightly-1", Namespaces: 3, ConfigMaps: 20}
	e.bucket.PutBackupT(t, spec)
	e.bucket.PutBackupT(t, backuptest.Spec{Name: "nightly-2"})
	s := e.store(t, backup.S3Config{}, "")

	names, err := s.ListBackups(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"nightly-1", "nightly-2"}, names)

	b, err := s.Backup(ctx, "nightly-1")
	require.NoError(t, err)
	require.Equal(t, "nightly-1", b.Name)
	require.EqualValues(t, "Completed", b.Status.Phase)

	list, err := s.ResourceList(ctx, "nightly-1")
	require.NoError(t, err)
	require.Equal(t, spec.Items(), list.Items())

	res, err := s.Results(ctx, "nightly-1")
	require.NoError(t, err)
	require.Equal(t, []string{"namespace ns-0: a warning"}, res.Warnings.Messages())

	logs, err := s.Logs(ctx, "nightly-1")
	require.NoError(t, err)
	text, err := io.ReadAll(logs)
	require.NoError(t, err)
	require.NoError(t, logs.Close())
	require.Contains(t, string(text), "Backup completed")

	var progress []int64
	rep, err := s.Verify(ctx, "nightly-1", backup.VerifyOptions{Progress: func(done, total int64) { progress = append(progress, done) }})
	require.NoError(t, err)
	require.True(t, rep.OK())
	require.Equal(t, spec.Items(), rep.Items)
	require.Equal(t, spec.Items(), rep.ListedItems)
	require.Equal(t, "1.1.0", rep.FormatVersion)
	require.NotEmpty(t, progress)
	require.Equal(t, rep.ArchiveBytes, progress[len(progress)-1])

	_, err = s.Backup(ctx, "missing")
	require.ErrorIs(t, err, backup.ErrNotFound)
	_, err = s.Verify(ctx, "missing", backup.VerifyOptions{})
	require.ErrorIs(t, err, backup.ErrNotFound)
}

func TestStore_verifyCatchesCorruption(t *testing.T) {
	e := startS3(t, localenv.Config{SkipAPIServer: true})
	ctx := context.Background()
	s := e.store(t, backup.S3Config{}, "")
	archive := func(name string) string { return e.bucket.BackupKey(name, name+".tar.gz") }

	tests := []struct {
		name    string
		damage  func(name string)
		problem string
		kind    backup.ProblemKind
	}{
		{"byte flipped in archive", func(name string) {
			data := e.bucket.ObjectT(t, archive(name))
			data[len(data)/2] ^= 0x40
			e.bucket.PutObjectT(t, archive(name), data)
		}, "tar.gz", backup.ProblemStream},
		{"archive truncated in the bucket", func(name string) {
			data := e.bucket.ObjectT(t, archive(name))
			e.bucket.PutObjectT(t, archive(name), data[:len(data)-100])
		}, "unexpected EOF", backup.ProblemTruncated},
		{"aws-chunked framing stored in the object", func(name string) {
			data := e.bucket.ObjectT(t, archive(name))
			e.bucket.PutObjectT(t, archive(name), append([]byte("2000;chunk-signature=abc\r\n"), data...))
		}, "not gzip data", backup.ProblemStream},
		{"resource list disagrees with the archive", func(name string) {
			e.bucket.PutObjectT(t, e.bucket.BackupKey(name, name+"-resource-list.json.gz"), gzipped(`{"v1/ConfigMap":["ns-0/cm-0"]}`))
		}, "v1/ConfigMap ns-0/cm-1: is in the archive (resources/configmaps/namespaces/ns-0/cm-1.json) but not in the resource list", backup.ProblemUnlisted},
		{"archive missing", func(name string) {
			_, err := e.bucket.Client.DeleteObject(ctx, deleteInput(e.bucket.Name, archive(name)))
			require.NoError(t, err)
		}, "missing", backup.ProblemFile},
		{"backup not final", func(name string) {
			e.bucket.PutObjectT(t, e.bucket.BackupKey(name, "velero-backup.json"),
				backuptest.Spec{Name: name, Phase: "InProgress"}.BackupJSON())
		}, "not final", backup.ProblemPhase},
		{"velero-backup.json malformed", func(name string) {
			e.bucket.PutObjectT(t, e.bucket.BackupKey(name, "velero-backup.json"), []byte(`{"kind":"Restore"`))
		}, "velero-backup.json", backup.ProblemFile},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := "damaged-" + string(rune('a'+i))
			e.bucket.PutBackupT(t, backuptest.Spec{Name: name, Seed: uint64(i)})
			_, err := s.Verify(ctx, name, backup.VerifyOptions{})
			require.NoError(t, err, "intact backup must verify")
			tt.damage(name)
			rep, err := s.Verify(ctx, name, backup.VerifyOptions{})
			require.ErrorIs(t, err, backup.ErrCorrupt)
			var verr *backup.VerifyError
			require.True(t, errors.As(err, &verr))
			require.Same(t, rep, verr.Report)
			require.False(t, rep.OK())
			require.Contains(t, err.Error(), tt.problem)
			requireProblem(t, rep, tt.kind, "", "")
		})
	}
}

func TestStore_checkPrefix(t *testing.T) {
	e := startS3(t, localenv.Config{SkipAPIServer: true})
	ctx := context.Background()
	e.bucket.PutObjectT(t, "shared/photos/cat.jpg", []byte("meow"))
	e.bucket.PutObjectT(t, "shared/backups/x/velero-backup.json", []byte("{}"))
	e.bucket.PutObjectT(t, "velero/backups/x/velero-backup.json", []byte("{}"))
	e.bucket.PutObjectT(t, "velero/kopia/ns/blob", []byte("k"))

	require.NoError(t, e.store(t, backup.S3Config{}, "velero").CheckPrefix(ctx))
	err := e.store(t, backup.S3Config{}, "shared").CheckPrefix(ctx)
	require.ErrorIs(t, err, backup.ErrInvalidPrefix)
	var perr *backup.PrefixError
	require.True(t, errors.As(err, &perr))
	require.Equal(t, []string{"photos"}, perr.Foreign)
	// The bucket root holds "shared" and "velero": not Velero's folders.
	err = e.store(t, backup.S3Config{}, "").CheckPrefix(ctx)
	require.ErrorIs(t, err, backup.ErrInvalidPrefix)
}

func gzipped(s string) []byte {
	var buf bytes.Buffer
	zw := gzipWriter(&buf)
	_, _ = zw.Write([]byte(s))
	_ = zw.Close()
	return buf.Bytes()
}
