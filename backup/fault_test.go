package backup_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cozystack/tenantkit/backup"
	"github.com/cozystack/tenantkit/backup/backuptest"
	"github.com/cozystack/tenantkit/localenv"
)

// TestStore_faults puts a fault-injecting proxy between the Store and
// versitygw: what is safe to retry is retried, everything else ends in a
// clear error, and nothing in the bucket changes.
func TestStore_faults(t *testing.T) {
	e := startS3(t, localenv.Config{SkipAPIServer: true})
	spec := backuptest.Spec{Name: "b1", Namespaces: 2, ConfigMaps: 200, PayloadBytes: 2048}
	e.bucket.PutBackupT(t, spec)
	keys := e.bucket.KeysT(t)
	proxy := backuptest.NewFaultProxyT(t, e.s3.URL, e.s3.CAPEM)
	store := func(attempts int) *backup.Store {
		return e.store(t, backup.S3Config{URL: proxy.URL, CACertPEM: proxy.CertPEM, MaxAttempts: attempts}, "")
	}
	count := func(substr string) int {
		n := 0
		for _, r := range proxy.Requests() {
			if strings.Contains(r, substr) {
				n++
			}
		}
		return n
	}

	tests := []struct {
		name    string
		faults  []backuptest.Fault
		timeout time.Duration
		run     func(ctx context.Context, s *backup.Store) error
		check   func(t *testing.T, err error)
	}{
		{
			name:   "5xx on metadata is retried",
			faults: []backuptest.Fault{{Kind: backuptest.Status, PathSuffix: "velero-backup.json", Times: 2}},
			run:    func(ctx context.Context, s *backup.Store) error { _, err := s.Backup(ctx, "b1"); return err },
			check: func(t *testing.T, err error) {
				require.NoError(t, err)
				require.Equal(t, 3, count("velero-backup.json"))
			},
		},
		{
			name:   "5xx that persists is a clear error",
			faults: []backuptest.Fault{{Kind: backuptest.Status, Status: 500, PathSuffix: "velero-backup.json", Times: -1}},
			run:    func(ctx context.Context, s *backup.Store) error { _, err := s.Backup(ctx, "b1"); return err },
			check: func(t *testing.T, err error) {
				require.Error(t, err)
				require.NotErrorIs(t, err, backup.ErrCorrupt)
				require.Contains(t, err.Error(), "500")
				require.Contains(t, err.Error(), "velero-backup.json")
			},
		},
		{
			name:   "connection resets on listing are retried",
			faults: []backuptest.Fault{{Kind: backuptest.Reset, Method: "GET", PathSuffix: "/velero-backups", Times: 2}},
			run: func(ctx context.Context, s *backup.Store) error {
				names, err := s.ListBackups(ctx)
				if err == nil && len(names) != 1 {
					return errors.New("wrong listing")
				}
				return err
			},
			check: func(t *testing.T, err error) { require.NoError(t, err) },
		},
		{
			name:   "truncated archive download resumes with a range request",
			faults: []backuptest.Fault{{Kind: backuptest.Truncate, PathSuffix: ".tar.gz", After: 100 << 10, Times: 2}},
			run: func(ctx context.Context, s *backup.Store) error {
				_, err := s.Verify(ctx, "b1", backup.VerifyOptions{})
				return err
			},
			check: func(t *testing.T, err error) {
				require.NoError(t, err)
				require.Equal(t, 2, count(".tar.gz bytes="), "two resumptions: %v", proxy.Requests())
			},
		},
		{
			name:   "archive that always breaks off is a fetch error, not corruption",
			faults: []backuptest.Fault{{Kind: backuptest.Truncate, PathSuffix: ".tar.gz", After: 50 << 10, Times: -1}},
			run: func(ctx context.Context, s *backup.Store) error {
				_, err := s.Verify(ctx, "b1", backup.VerifyOptions{})
				return err
			},
			check: func(t *testing.T, err error) {
				require.Error(t, err)
				require.NotErrorIs(t, err, backup.ErrCorrupt)
				require.Contains(t, err.Error(), "resumes")
			},
		},
		{
			name:    "slow responses end with the context",
			faults:  []backuptest.Fault{{Kind: backuptest.Slow, Delay: 5 * time.Second, Times: -1}},
			timeout: 500 * time.Millisecond,
			run:     func(ctx context.Context, s *backup.Store) error { _, err := s.ListBackups(ctx); return err },
			check: func(t *testing.T, err error) {
				require.ErrorIs(t, err, context.DeadlineExceeded)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			proxy.Clear()
			for _, f := range tt.faults {
				proxy.Inject(f)
			}
			before := len(proxy.Requests())
			ctx := context.Background()
			if tt.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				defer cancel()
			}
			err := tt.run(ctx, store(4))
			t.Logf("requests: %v", proxy.Requests()[before:])
			tt.check(t, err)
			require.Positive(t, proxy.Injected())
		})
	}
	require.Equal(t, keys, e.bucket.KeysT(t), "the bucket changed")
}
