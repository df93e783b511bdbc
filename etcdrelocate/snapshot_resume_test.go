package etcdrelocate_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cozystack/tenantkit/etcdrelocate"
	"github.com/cozystack/tenantkit/localenv/etcdlayout"
)

// TestResumeSnapshotFaults: a relocation interrupted right after its
// snapshot verified is resumed by a fresh executor after the snapshot file
// was left intact, deleted, truncated or replaced by other bytes. The
// resume relies on the recorded file only while it has the recorded size
// and SHA-256: otherwise the snapshot step takes it again (not skipped),
// and in every case the old volume goes only once a snapshot that exists
// verified, and the Result reports its real size.
func TestResumeSnapshotFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a tenant cluster")
	}
	t.Parallel()
	te := startTenant(t, etcdlayout.Config{Tenant: "snapfault"})
	r := te.relocator(t, nil)
	member := "etcd-1"
	for _, tt := range []struct {
		name   string
		damage func(t *testing.T, path string)
		intact bool
	}{
		{"intact", func(*testing.T, string) {}, true},
		{"deleted", func(t *testing.T, path string) { require.NoError(t, os.Remove(path)) }, false},
		{"truncated", func(t *testing.T, path string) { require.NoError(t, os.Truncate(path, 4096)) }, false},
		{"replaced", func(t *testing.T, path string) {
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			data[len(data)/2] ^= 0xff
			require.NoError(t, os.WriteFile(path, data, 0o600))
		}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			target := te.freeNode(t, te.waitHealthy(t, r, member))
			runCtx, crash := context.WithCancel(ctx)
			first := te.relocator(t, func(e etcdrelocate.Event) {
				if e.Step == etcdrelocate.StepSnapshot && e.Phase == etcdrelocate.EventDone {
					crash()
				}
			})
			req := etcdrelocate.Request{Namespace: te.tenant.Namespace, Member: member, TargetNode: target,
				Options: etcdrelocate.Options{SnapshotDir: t.TempDir(), SnapshotFirst: true}}
			plan, err := first.Plan(ctx, req)
			require.NoError(t, err)
			_, err = first.Execute(runCtx, plan)
			require.ErrorIs(t, err, context.Canceled)
			fresh := te.relocator(t, nil)
			cp := te.observe(t, fresh).Checkpoint
			require.NotNil(t, cp)
			require.NotEmpty(t, cp.SnapshotPath, "the interrupted run recorded its snapshot")
			require.NotEmpty(t, cp.SnapshotSHA256)
			tt.damage(t, cp.SnapshotPath)
			_, statErr := os.Stat(cp.SnapshotPath)
			damagedKept := statErr == nil

			plan, err = fresh.Plan(ctx, etcdrelocate.Request{Namespace: te.tenant.Namespace})
			require.NoError(t, err)
			require.True(t, plan.Resume)
			res, err := fresh.Execute(ctx, plan)
			require.NoError(t, err)
			require.Equal(t, target, te.podNode(t, member))
			snap := res.Step(etcdrelocate.StepSnapshot)
			require.NotNil(t, snap)
			require.Equal(t, tt.intact, snap.Skipped, "snapshot step: %s", snap.Message)
			if tt.intact {
				require.Equal(t, cp.SnapshotPath, res.SnapshotPath)
			} else {
				require.Contains(t, snap.Message, "cannot be relied on")
				if damagedKept {
					// The damaged file is still there: the retake never
					// replaces it (a deleted one's name may be reused).
					require.NotEqual(t, cp.SnapshotPath, res.SnapshotPath, "taken again to a new file")
				}
			}
			st, err := os.Stat(res.SnapshotPath)
			require.NoError(t, err, "the snapshot the resumed run relied on exists")
			require.Positive(t, res.SnapshotBytes)
			require.Equal(t, st.Size(), res.SnapshotBytes, "the Result reports the snapshot's real size")
			te.requireOldVolumeReleased(t, plan)
		})
	}
}
