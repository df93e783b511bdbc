package localvolume_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/cozystack/tenantkit/localenv/internal/localvolume"
)

func TestManager_createsClassAndVolumesAndRecyclesReleased(t *testing.T) {
	ctx := t.Context()
	cs := fake.NewClientset()
	root := t.TempDir()
	m, err := localvolume.Start(ctx, localvolume.Config{
		Client: cs, Nodes: []string{"node-a", "node-b"}, PerNode: 2,
		Dir: func(node string) string { return filepath.Join(root, node) },
	})
	require.NoError(t, err)
	defer m.Stop()

	sc, err := cs.StorageV1().StorageClasses().Get(ctx, "local", metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, storagev1.VolumeBindingWaitForFirstConsumer, *sc.VolumeBindingMode)
	require.Equal(t, corev1.PersistentVolumeReclaimDelete, *sc.ReclaimPolicy)
	require.Equal(t, "true", sc.Annotations["storageclass.kubernetes.io/is-default-class"])

	pvs, err := cs.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, pvs.Items, 4)
	pv, err := cs.CoreV1().PersistentVolumes().Get(ctx, "node-b-vol-1", metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, filepath.Join(root, "node-b", "node-b-vol-1"), pv.Spec.Local.Path)
	term := pv.Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions[0]
	require.Equal(t, []string{"node-b"}, term.Values)
	require.Equal(t, corev1.LabelHostname, term.Key)

	// A member wrote data; its claim is deleted and the volume Released.
	require.NoError(t, os.MkdirAll(filepath.Join(pv.Spec.Local.Path, "default.etcd", "member"), 0o700))
	pv.Status.Phase = corev1.VolumeReleased
	pv.Spec.ClaimRef = &corev1.ObjectReference{Namespace: "tenant-demo", Name: "data-etcd-1"}
	_, err = cs.CoreV1().PersistentVolumes().UpdateStatus(ctx, pv, metav1.UpdateOptions{})
	require.NoError(t, err)

	require.Eventually(t, func() bool { return m.Recycled() == 1 }, 10*time.Second, 20*time.Millisecond)
	require.Eventually(t, func() bool {
		got, err := cs.CoreV1().PersistentVolumes().Get(ctx, "node-b-vol-1", metav1.GetOptions{})
		return err == nil && got.Spec.ClaimRef == nil && got.Status.Phase == ""
	}, 10*time.Second, 20*time.Millisecond, "volume put back, unbound")
	entries, err := os.ReadDir(pv.Spec.Local.Path)
	require.NoError(t, err)
	require.Empty(t, entries, "released volume wiped")
}

func TestManager_keepsRetainedVolumes(t *testing.T) {
	ctx := t.Context()
	cs := fake.NewClientset()
	root := t.TempDir()
	m, err := localvolume.Start(ctx, localvolume.Config{
		Client: cs, Nodes: []string{"node-a"}, PerNode: 1,
		Dir: func(node string) string { return filepath.Join(root, node) },
	})
	require.NoError(t, err)
	defer m.Stop()
	pv, err := cs.CoreV1().PersistentVolumes().Get(ctx, "node-a-vol-0", metav1.GetOptions{})
	require.NoError(t, err)
	data := filepath.Join(pv.Spec.Local.Path, "default.etcd")
	require.NoError(t, os.MkdirAll(data, 0o700))
	pv.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimRetain
	pv.Spec.ClaimRef = &corev1.ObjectReference{Namespace: "tenant-demo", Name: "data-etcd-1"}
	pv, err = cs.CoreV1().PersistentVolumes().Update(ctx, pv, metav1.UpdateOptions{})
	require.NoError(t, err)
	pv.Status.Phase = corev1.VolumeReleased
	pv, err = cs.CoreV1().PersistentVolumes().UpdateStatus(ctx, pv, metav1.UpdateOptions{})
	require.NoError(t, err)
	require.Never(t, func() bool { return m.Recycled() > 0 }, 500*time.Millisecond, 20*time.Millisecond, "a retained volume is kept")
	require.DirExists(t, data)

	pv.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimDelete
	_, err = cs.CoreV1().PersistentVolumes().Update(ctx, pv, metav1.UpdateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return m.Recycled() == 1 }, 10*time.Second, 20*time.Millisecond, "recycled once back to Delete")
	require.NoDirExists(t, data)
}

func TestStart_invalidConfig(t *testing.T) {
	_, err := localvolume.Start(t.Context(), localvolume.Config{})
	require.ErrorIs(t, err, localvolume.ErrInvalidConfig)
}
