package etcdrelocate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// snapshotFaults are what can happen to a recorded snapshot file between
// an interrupted run and its resume.
var snapshotFaults = []struct {
	name   string
	damage func(t *testing.T, path string)
	// ok: the file still proves the snapshot.
	ok bool
}{
	{"intact", func(*testing.T, string) {}, true},
	{"deleted", func(t *testing.T, path string) { require.NoError(t, os.Remove(path)) }, false},
	{"truncated", func(t *testing.T, path string) { require.NoError(t, os.Truncate(path, 100)) }, false},
	{"replaced by other bytes of the same size", func(t *testing.T, path string) {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		data[len(data)/2] ^= 0xff
		require.NoError(t, os.WriteFile(path, data, 0o600))
	}, false},
}

// recordedSnapshot writes a snapshot file and records it in x's checkpoint
// (in the ConfigMap too), as a run that was interrupted after it verified.
func recordedSnapshot(t *testing.T, x *run) string {
	t.Helper()
	data := make([]byte, 4096)
	for i := range data {
		data[i] = byte(i * 13)
	}
	path := filepath.Join(t.TempDir(), "etcd-ns-etcd.db")
	require.NoError(t, os.WriteFile(path, data, 0o600))
	sum := sha256.Sum256(data)
	x.cp.SnapshotPath, x.cp.SnapshotBytes, x.cp.SnapshotSHA256 = path, int64(len(data)), hex.EncodeToString(sum[:])
	require.NoError(t, x.saveCheckpoint(context.Background()))
	return path
}

// storedCheckpoint reads x's checkpoint back from the ConfigMap.
func storedCheckpoint(t *testing.T, x *run) *Checkpoint {
	t.Helper()
	cm, err := x.r.cfg.Kube.CoreV1().ConfigMaps("ns").Get(context.Background(), checkpointName("etcd"), metav1.GetOptions{})
	require.NoError(t, err)
	cp, err := DecodeCheckpoint([]byte(cm.Data[checkpointKey]))
	require.NoError(t, err)
	return cp
}

// silence makes every voter stop answering, so that no snapshot can be
// taken again (snapshotSource finds no healthy voter).
func silence(f *fakeEtcd) {
	for id := range f.status {
		f.status[id] = nil
	}
}

// TestResumeSnapshotStep: a resumed snapshot step relies on the recorded
// snapshot only while its file has the recorded size and SHA-256, and then
// reports its real size; a deleted, truncated or replaced file is taken
// again (here it cannot be: every voter is silent, so the step fails with
// ErrQuorumAtRisk) and its record is dropped from the checkpoint.
func TestResumeSnapshotStep(t *testing.T) {
	for _, tt := range snapshotFaults {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeEtcd(3)
			x := fakeRun(t, f)
			path := recordedSnapshot(t, x)
			tt.damage(t, path)
			if !tt.ok {
				silence(f)
			}
			msg, skipped, err := snapshotStep{}.Run(context.Background(), x)
			if tt.ok {
				require.NoError(t, err)
				require.True(t, skipped)
				require.Contains(t, msg, "taken earlier: "+path)
				require.Equal(t, path, x.res.SnapshotPath)
				require.Equal(t, int64(4096), x.res.SnapshotBytes, "a resumed run reports the snapshot's real size")
				require.Equal(t, path, storedCheckpoint(t, x).SnapshotPath)
				return
			}
			require.ErrorIs(t, err, ErrQuorumAtRisk, "the snapshot is taken again")
			require.False(t, skipped)
			require.Empty(t, x.res.SnapshotPath)
			require.Zero(t, x.res.SnapshotBytes)
			cp := storedCheckpoint(t, x)
			require.Empty(t, cp.SnapshotPath, "the unusable record is dropped")
			require.Empty(t, cp.SnapshotSHA256)
		})
	}
}

// TestResumeReleaseVolume: release-volume lets the old volume go only
// after a snapshot that verifies: a recorded file that no longer matches
// is taken again first, and where that fails the volume stays Retain.
func TestResumeReleaseVolume(t *testing.T) {
	for _, tt := range snapshotFaults {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeEtcd(3)
			x := fakeRun(t, f)
			ctx := context.Background()
			x.p.Member.PV, x.p.Member.PVCUID = "pv-m1", "claim-uid"
			x.cp.RetainedVolume = "pv-m1"
			pvs := x.r.cfg.Kube.CoreV1().PersistentVolumes()
			_, err := pvs.Create(ctx, &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-m1"},
				Spec: corev1.PersistentVolumeSpec{PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
					ClaimRef: &corev1.ObjectReference{Name: "data-m1", UID: types.UID("claim-uid")}}}, metav1.CreateOptions{})
			require.NoError(t, err)
			path := recordedSnapshot(t, x)
			tt.damage(t, path)
			if !tt.ok {
				silence(f)
			}
			_, _, err = releaseVolumeStep{}.Run(ctx, x)
			pv, gerr := pvs.Get(ctx, "pv-m1", metav1.GetOptions{})
			require.NoError(t, gerr)
			if tt.ok {
				require.NoError(t, err)
				require.Equal(t, corev1.PersistentVolumeReclaimDelete, pv.Spec.PersistentVolumeReclaimPolicy)
				require.Equal(t, int64(4096), x.res.SnapshotBytes)
				return
			}
			require.ErrorIs(t, err, ErrQuorumAtRisk)
			require.Equal(t, corev1.PersistentVolumeReclaimRetain, pv.Spec.PersistentVolumeReclaimPolicy,
				"the old volume stays until a snapshot verifies")
			require.Empty(t, storedCheckpoint(t, x).SnapshotPath)
		})
	}
}

// TestCheckSnapshotFile: a checkpoint written before sizes and digests
// were recorded proves nothing either.
func TestCheckSnapshotFile(t *testing.T) {
	x := fakeRun(t, newFakeEtcd(3))
	recordedSnapshot(t, x)
	require.NoError(t, checkSnapshotFile(x.cp))
	x.cp.SnapshotSHA256 = ""
	require.ErrorContains(t, checkSnapshotFile(x.cp), "records no size and SHA-256")
}
