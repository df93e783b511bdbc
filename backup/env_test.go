package backup_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cozystack/tenantkit/backup"
	"github.com/cozystack/tenantkit/backup/backuptest"
	"github.com/cozystack/tenantkit/internal/localenv"
)

// s3Env is a local environment with a versitygw S3 server and one bucket.
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
	srv, err := env.StartS3(context.Background(), localenv.S3Config{Buckets: []string{"velero-backups"}})
	require.NoError(t, err)
	return &s3Env{
		env: env, s3: srv,
		creds:  backup.Credentials{Bucket: "velero-backups", Endpoint: srv.Endpoint, AccessKeyID: srv.AccessKey, SecretAccessKey: srv.SecretKey},
		bucket: backuptest.Bucket{Client: srv.Client(), Name: "velero-backups"},
	}
}

func (e *s3Env) store(t testing.TB, cfg backup.StoreConfig) *backup.Store {
	t.Helper()
	cfg.Credentials = e.creds
	if cfg.CACertPEM == nil {
		cfg.CACertPEM = e.s3.CAPEM
	}
	s, err := backup.NewStore(cfg)
	require.NoError(t, err)
	return s
}
