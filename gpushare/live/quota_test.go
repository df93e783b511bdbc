package live_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/cozystack/tenantkit/gpushare"
	"github.com/cozystack/tenantkit/gpushare/gpusharetest"
	"github.com/cozystack/tenantkit/gpushare/live"
	"github.com/cozystack/tenantkit/localenv"
)

// TestQuotasFromKubeAPIServer: a ResourceQuota on HAMi's names, as the
// apiserver stores it, reaches the ledger through Watch, and its updates
// and delete follow.
func TestQuotasFromKubeAPIServer(t *testing.T) {
	env := localenv.StartT(t, localenv.Config{EtcdMembers: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs, err := kubernetes.NewForConfig(env.RESTConfig())
	require.NoError(t, err)
	_, err = cs.CoreV1().Nodes().Create(ctx, gpusharetest.NodeT(t, "gpu", gpusharetest.GPUs("gpu", 2, a100Type, 81920)...), metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = cs.CoreV1().Pods("team").Create(ctx, gpusharetest.AllocatedPodT(t, gpushare.Placement{Namespace: "team", Name: "held", Node: "gpu",
		Containers: gpushare.PodAllocation{{share("GPU-gpu-0", 20000, 30)}}}), metav1.CreateOptions{})
	require.NoError(t, err)
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "gpu"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{
			"limits.nvidia.com/gpumem": resource.MustParse("30000"),
			"requests.cpu":             resource.MustParse("10"),
		}}}
	q, err = cs.CoreV1().ResourceQuotas("team").Create(ctx, q, metav1.CreateOptions{})
	require.NoError(t, err)

	l, err := gpushare.NewLedger(gpushare.Config{})
	require.NoError(t, err)
	require.NoError(t, live.Watch(ctx, cs, l))
	require.Equal(t, gpushare.QuotaLimit{Resource: "limits.nvidia.com/gpumem", Limit: 30000, Set: true, Used: 20000}, l.Quota("team").Memory)
	req := gpushare.PodRequest{Namespace: "team", Name: "new", Containers: []gpushare.ContainerRequest{{Name: "main", Count: 1, MemoryMiB: 16000}}}
	_, err = l.Fit(req)
	var fe *gpushare.FitError
	require.ErrorAs(t, err, &fe)
	require.Equal(t, gpushare.BlockQuota, fe.Blocker.Kind)

	eventually := func(what string, cond func() bool) {
		t.Helper()
		require.Eventually(t, cond, 30*time.Second, 20*time.Millisecond, what)
	}
	// The update replaces the memory limit with a cores limit of 0.
	q.Spec.Hard = corev1.ResourceList{"limits.nvidia.com/gpucores": resource.MustParse("0")}
	_, err = cs.CoreV1().ResourceQuotas("team").Update(ctx, q, metav1.UpdateOptions{})
	require.NoError(t, err)
	eventually("update seen", func() bool { return l.Quota("team").Cores.Set })
	require.False(t, l.Quota("team").Memory.Set)
	_, err = l.Fit(req)
	require.ErrorAs(t, err, &fe)
	require.Equal(t, &gpushare.QuotaExceeded{Namespace: "team", Resource: "limits.nvidia.com/gpucores", Limit: 0, Used: 30, Asked: 0},
		fe.Blocker.Quota, "the namespace's 30 cores already pass the explicit 0")

	require.NoError(t, cs.CoreV1().ResourceQuotas("team").Delete(ctx, "gpu", metav1.DeleteOptions{}))
	eventually("delete seen", func() bool { return !l.Quota("team").Cores.Set })
	_, err = l.Fit(req)
	require.NoError(t, err)
}
