package backup_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	velerov1 "github.com/vmware-tanzu/velero/pkg/apis/velero/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/cozystack/tenantkit/backup"
	"github.com/cozystack/tenantkit/backup/backuptest"
	"github.com/cozystack/tenantkit/localenv"
)

func memStore(t testing.TB, specs ...backuptest.Spec) *backup.Store {
	t.Helper()
	var m backuptest.MemObjects
	for _, s := range specs {
		require.NoError(t, m.PutBackup(s))
	}
	s, err := backup.NewStore(backup.StoreConfig{Objects: &m})
	require.NoError(t, err)
	return s
}

// unreachable is a cluster nobody listens on.
func unreachable(t *testing.T) backup.RestoreTarget {
	t.Helper()
	target, err := backup.NewRestoreTarget(&rest.Config{Host: "https://127.0.0.1:1", Timeout: 2 * time.Second})
	require.NoError(t, err)
	return target
}

func TestPlanRestoreBadInput(t *testing.T) {
	ctx := context.Background()
	store := memStore(t, backuptest.Spec{Name: "good"}, backuptest.Spec{Name: "unfinished", Phase: velerov1.BackupPhaseInProgress})

	t.Run("a backup that fails Verify is refused before the cluster is read", func(t *testing.T) {
		// The target is unreachable: reaching it would be a ClusterError.
		_, err := store.PlanRestore(ctx, "unfinished", unreachable(t), backup.PlanOptions{})
		require.ErrorIs(t, err, backup.ErrCorrupt)
		var verr *backup.VerifyError
		require.ErrorAs(t, err, &verr)
		require.Equal(t, backup.ProblemPhase, verr.Report.Problems[0].Kind)
		require.NotErrorIs(t, err, backup.ErrClusterUnreadable)
	})
	t.Run("a cluster that cannot be read is a ClusterError", func(t *testing.T) {
		_, err := store.PlanRestore(ctx, "good", unreachable(t), backup.PlanOptions{})
		require.ErrorIs(t, err, backup.ErrClusterUnreadable)
		var cerr *backup.ClusterError
		require.ErrorAs(t, err, &cerr)
		require.Equal(t, "discovery", cerr.Op)
	})
	t.Run("a missing backup", func(t *testing.T) {
		_, err := store.PlanRestore(ctx, "nope", unreachable(t), backup.PlanOptions{})
		require.ErrorIs(t, err, backup.ErrNotFound)
	})
	t.Run("no target", func(t *testing.T) {
		_, err := store.PlanRestore(ctx, "good", backup.RestoreTarget{}, backup.PlanOptions{})
		require.ErrorIs(t, err, backup.ErrClusterUnreadable)
	})
}

func TestCompareResults(t *testing.T) {
	got := backup.CompareResults(
		map[string]string{"v1/ConfigMap a/x": "created", "v1/ConfigMap a/y": "skipped", "v1/Namespace a": "created"},
		map[string]string{"v1/ConfigMap a/x": "created", "v1/ConfigMap a/y": "failed", "v1/Secret a/z": "created"})
	require.Equal(t, []backup.Disagreement{
		{ID: "v1/ConfigMap a/y", Planned: "skipped", Velero: "failed"},
		{ID: "v1/Namespace a", Planned: "created"},
		{ID: "v1/Secret a/z", Velero: "created"},
	}, got)
}

// TestPlanRestoreSpec plans against a real apiserver (no Velero): the
// spec's filters, Velero's built-in exclusions and a bad spec.
func TestPlanRestoreSpec(t *testing.T) {
	env := localenv.StartT(t, localenv.Config{EtcdMembers: 1})
	ctx := context.Background()
	store := memStore(t, backuptest.Spec{Name: "b", Namespaces: 2, ConfigMaps: 3})
	target, err := backup.NewRestoreTarget(env.RESTConfig())
	require.NoError(t, err)
	plan, err := store.PlanRestore(ctx, "b", target, backup.PlanOptions{Spec: velerov1.RestoreSpec{
		ExcludedNamespaces: []string{"ns-1"}, NamespaceMapping: map[string]string{"ns-0": "copy"}}})
	require.NoError(t, err)
	require.True(t, plan.Verify.OK())
	t.Logf("%s", plan)
	require.Equal(t, "namespaces", plan.Items[0].Resource, "namespaces restore first")
	require.Equal(t, "copy", plan.Items[0].Name)
	require.Positive(t, plan.Counts[backup.RestoreCreate])
	require.Positive(t, plan.Counts[backup.RestoreExcluded])
	for _, it := range plan.Items {
		if it.Namespace == "ns-1" {
			require.Equal(t, backup.RestoreExcluded, it.Action, it.ID())
		}
	}
	for _, bad := range []struct {
		spec  velerov1.RestoreSpec
		field string
	}{
		{velerov1.RestoreSpec{IncludedResources: []string{"nodes"}}, "includedResources"},
		{velerov1.RestoreSpec{IncludedResources: []string{"*", "configmaps"}}, "includedResources"},
		{velerov1.RestoreSpec{ExcludedNamespaces: []string{"*"}}, "excludedNamespaces"},
		{velerov1.RestoreSpec{IncludedNamespaces: []string{"ns-0"}, ExcludedNamespaces: []string{"ns-0"}}, "excludedNamespaces"},
		{velerov1.RestoreSpec{LabelSelector: &metav1.LabelSelector{}, OrLabelSelectors: []*metav1.LabelSelector{{}}}, "orLabelSelectors"},
		{velerov1.RestoreSpec{ExistingResourcePolicy: "replace"}, "existingResourcePolicy"},
	} {
		_, err = store.PlanRestore(ctx, "b", target, backup.PlanOptions{Spec: bad.spec})
		require.ErrorIs(t, err, backup.ErrInvalidRestoreSpec, "%+v", bad.spec)
		var serr *backup.RestoreSpecError
		require.ErrorAs(t, err, &serr)
		require.Equal(t, bad.field, serr.Field, "%+v", bad.spec)
	}
	// Velero takes a selector it cannot convert and fails the restore
	// before any item (PartiallyFailed): predicted, not refused.
	plan, err = store.PlanRestore(ctx, "b", target, backup.PlanOptions{Spec: velerov1.RestoreSpec{
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"bad key!": "x"}}}})
	require.NoError(t, err)
	require.Equal(t, len(plan.Items), plan.Counts[backup.RestoreFail])
	require.Empty(t, plan.VeleroResults())
	// A mapping onto a name that is not a namespace name fails those items.
	plan, err = store.PlanRestore(ctx, "b", target, backup.PlanOptions{Spec: velerov1.RestoreSpec{
		NamespaceMapping: map[string]string{"ns-0": "Bad_NS"}}})
	require.NoError(t, err)
	for _, it := range plan.Items {
		if it.Namespace == "ns-0" || (it.Resource == "namespaces" && it.Name == "ns-0") {
			require.Equal(t, backup.RestoreFail, it.Action, it.ID())
			require.Empty(t, it.VeleroResult, it.ID())
		} else {
			require.NotEqual(t, backup.RestoreFail, it.Action, it.ID())
		}
	}
}

// BenchmarkPreview plans the restore of a 10,000-item backup into a live
// cluster and, in the same iteration, verifies the same backup (the
// baseline). It reports preview/verify (aim < 2) and the peak heap of
// each. "empty": nothing collides; "collide": 1,000 of the items exist,
// changed, so those are decoded, normalized, compared, and the fields of
// 100 of them named (a get each).
func BenchmarkPreview(b *testing.B) {
	env, err := localenv.Start(context.Background(), localenv.Config{EtcdMembers: 1})
	require.NoError(b, err)
	b.Cleanup(func() { _ = env.Stop() })
	spec := backuptest.Spec{Name: "bench-10k", Namespaces: 10, ConfigMaps: 1000}
	store := memStore(b, spec)
	target, err := backup.NewRestoreTarget(env.RESTConfig())
	require.NoError(b, err)
	b.Run("empty", func(b *testing.B) { benchPreview(b, store, target, spec) })
	kube, err := kubernetes.NewForConfig(env.RESTConfig())
	require.NoError(b, err)
	ctx := context.Background()
	for i := range 1000 {
		ns := fmt.Sprintf("ns-%d", i%10)
		if i < 10 {
			_, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
			require.NoError(b, err)
		}
		_, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i/10)},
			Data: map[string]string{"payload": "changed"}}, metav1.CreateOptions{})
		require.NoError(b, err)
	}
	b.Run("collide", func(b *testing.B) { benchPreview(b, store, target, spec) })
}

func benchPreview(b *testing.B, store *backup.Store, target backup.RestoreTarget, spec backuptest.Spec) {
	ctx := context.Background()
	var verify, preview time.Duration
	var peakVerify, peakPreview uint64
	for range b.N {
		runtime.GC()
		stop := sampleHeap(&peakVerify)
		start := time.Now()
		_, err := store.Verify(ctx, spec.Name, backup.VerifyOptions{})
		verify += time.Since(start)
		stop()
		require.NoError(b, err)
		runtime.GC()
		stop = sampleHeap(&peakPreview)
		start = time.Now()
		plan, err := store.PlanRestore(ctx, spec.Name, target, backup.PlanOptions{})
		preview += time.Since(start)
		stop()
		require.NoError(b, err)
		require.Len(b, plan.Items, spec.Items())
	}
	b.ReportMetric(float64(preview)/float64(verify), "preview/verify")
	b.ReportMetric(float64(verify.Milliseconds())/float64(b.N), "verify-ms/op")
	b.ReportMetric(float64(preview.Milliseconds())/float64(b.N), "preview-ms/op")
	b.ReportMetric(float64(peakVerify)/(1<<20), "verify-peak-heap-MiB")
	b.ReportMetric(float64(peakPreview)/(1<<20), "preview-peak-heap-MiB")
}

// sampleHeap records the largest HeapAlloc seen until stop is called.
func sampleHeap(peak *uint64) (stop func()) {
	var done atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		for !done.Load() {
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > *peak {
				*peak = ms.HeapAlloc
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	return func() { done.Store(true); wg.Wait() }
}
