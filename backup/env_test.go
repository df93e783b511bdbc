package backup_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cozystack/tenantkit/backup"
	"github.com/cozystack/tenantkit/backup/backuptest"
	"github.com/cozystack/tenantkit/localenv"
)

// s3Env is a local environment with an S3 server and one bucket. The server
// is versitygw, or SeaweedFS (`weed mini`, what Cozystack runs) with
// TENANTKIT_S3_BACKEND=seaweedfs (`make test-seaweedfs`).
type s3Env struct {
	env    *localenv.Env
	s3     *localenv.S3Server
	creds  backup.Credentials
	bucket backuptest.Bucket
}

// startS3 starts a single-member etcd (for the CA) and an S3 server with
// bucket "velero-backups". It skips under -short.
func startS3(t *testing.T, cfg localenv.Config) *s3Env {
	t.Helper()
	if cfg.EtcdMembers == 0 {
		cfg.EtcdMembers = 1
	}
	env := localenv.StartT(t, cfg)
	srv, err := env.StartS3(context.Background(), localenv.S3Config{Backend: localenv.S3BackendFromEnv(), Buckets: []string{"velero-backups"}})
	require.NoError(t, err)
	return &s3Env{
		env: env, s3: srv,
		creds:  backup.Credentials{Bucket: "velero-backups", Endpoint: srv.Endpoint, AccessKeyID: srv.AccessKey, SecretAccessKey: srv.SecretKey},
		bucket: backuptest.Bucket{Client: srv.Client(), Name: "velero-backups"},
	}
}

func (e *s3Env) store(t testing.TB, cfg backup.S3Config, prefix string) *backup.Store {
	t.Helper()
	cfg.Credentials = e.creds
	if cfg.CACertPEM == nil {
		cfg.CACertPEM = e.s3.CAPEM
	}
	objects, err := backup.NewS3Objects(cfg)
	require.NoError(t, err)
	s, err := backup.NewStore(backup.StoreConfig{Objects: objects, Prefix: prefix})
	require.NoError(t, err)
	return s
}

// backupsInBucket returns the backups store lists, less, under SeaweedFS,
// the folders of deleted backups. SeaweedFS keeps listing a folder whose
// objects are all deleted (a common prefix with nothing under it) until its
// empty-folder cleaner removes it, two minutes or more later, so right
// after a DeleteBackupRequest ListBackups still names the backup. Each name
// dropped here is checked to hold no object and to read as ErrNotFound.
func (e *s3Env) backupsInBucket(t testing.TB, ctx context.Context, store *backup.Store) []string {
	t.Helper()
	listed, err := store.ListBackups(ctx)
	require.NoError(t, err)
	if e.s3.Backend != localenv.SeaweedFS {
		return listed
	}
	keys := e.bucket.KeysT(t)
	var out []string
	for _, name := range listed {
		if slices.ContainsFunc(keys, func(k string) bool { return strings.Contains(k, "backups/"+name+"/") }) {
			out = append(out, name)
			continue
		}
		_, err := store.Backup(ctx, name)
		require.ErrorIs(t, err, backup.ErrNotFound, "the empty folder of deleted backup %s", name)
	}
	return out
}
