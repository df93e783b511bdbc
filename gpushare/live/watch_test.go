package live_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/cozystack/tenantkit/gpushare"
	"github.com/cozystack/tenantkit/gpushare/gpusharetest"
	"github.com/cozystack/tenantkit/gpushare/live"
	"github.com/cozystack/tenantkit/localenv"
)

// TestLedgerFromKubeAPIServer runs against a real kube-apiserver: GPU nodes
// registered as HAMi's device plugin writes them, in all three formats,
// pods annotated as HAMi's scheduler writes them, and a ledger built
// through informers that must match them and follow deletes, finished pods,
// new pods and re-registrations live.
func TestLedgerFromKubeAPIServer(t *testing.T) {
	env := localenv.StartT(t, localenv.Config{EtcdMembers: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs, err := kubernetes.NewForConfig(env.RESTConfig())
	require.NoError(t, err)

	// Three nodes of different models, each registration format.
	for _, n := range []*corev1.Node{
		gpusharetest.NodeInT(t, gpushare.FormatJSON, "gpu-a100", gpusharetest.GPUs("a100", 2, a100Type, 81920)...),
		gpusharetest.NodeInT(t, gpushare.FormatFields9, "gpu-v100", gpusharetest.GPUs("v100", 2, "NVIDIA-Tesla V100-PCIE-32GB", 32768)...),
		gpusharetest.NodeInT(t, gpushare.FormatFields7, "gpu-t4", gpusharetest.GPUs("t4", 1, t4Type, 15360)...),
	} {
		_, err := cs.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	for _, ns := range []string{"ml", "web"} {
		_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	createPod := func(p gpushare.Placement, phase corev1.PodPhase) {
		t.Helper()
		pod := gpusharetest.AllocatedPodT(t, p)
		created, err := cs.CoreV1().Pods(p.Namespace).Create(ctx, pod, metav1.CreateOptions{})
		require.NoError(t, err)
		created.Status.Phase = phase
		_, err = cs.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, created, metav1.UpdateOptions{})
		require.NoError(t, err)
	}
	createPod(gpushare.Placement{Namespace: "ml", Name: "train", Node: "gpu-a100",
		Containers: gpushare.PodAllocation{{share("GPU-a100-0", 40000, 50), share("GPU-a100-1", 40000, 50)}}}, corev1.PodRunning)
	createPod(gpushare.Placement{Namespace: "ml", Name: "eval", Node: "gpu-v100",
		Containers: gpushare.PodAllocation{{share("GPU-v100-0", 16384, 0)}}}, corev1.PodPending)
	createPod(gpushare.Placement{Namespace: "web", Name: "thumbs", Node: "gpu-t4",
		Containers: gpushare.PodAllocation{{share("GPU-t4-0", 3000, 30)}}}, corev1.PodRunning)
	createPod(gpushare.Placement{Namespace: "web", Name: "done", Node: "gpu-t4",
		Containers: gpushare.PodAllocation{{share("GPU-t4-0", 8000, 0)}}}, corev1.PodSucceeded)
	// A pod HAMi has not placed.
	_, err = cs.CoreV1().Pods("web").Create(ctx, gpusharetest.Pod("web", "waiting", gpusharetest.Container("main", 1, 1000, 10)), metav1.CreateOptions{})
	require.NoError(t, err)

	l, err := gpushare.NewLedger(gpushare.Config{})
	require.NoError(t, err)
	require.NoError(t, live.Watch(ctx, cs, l))

	used := func(node string) []gpushare.Amount {
		nu, ok := l.Node(node)
		if !ok {
			return nil
		}
		var out []gpushare.Amount
		for _, g := range nu.GPUs {
			out = append(out, g.Used)
		}
		return out
	}
	require.Equal(t, []gpushare.Amount{{Slots: 1, MemoryMiB: 40000, Cores: 50}, {Slots: 1, MemoryMiB: 40000, Cores: 50}}, used("gpu-a100"))
	require.Equal(t, []gpushare.Amount{{Slots: 1, MemoryMiB: 16384}, {}}, used("gpu-v100"))
	require.Equal(t, []gpushare.Amount{{Slots: 1, MemoryMiB: 3000, Cores: 30}}, used("gpu-t4"), "the Succeeded pod does not count")
	require.Equal(t, gpushare.Summary{Nodes: 3, GPUs: 5, Pods: 3,
		Capacity: gpushare.Amount{Slots: 50, MemoryMiB: 2*81920 + 2*32768 + 15360, Cores: 500},
		Used:     gpushare.Amount{Slots: 4, MemoryMiB: 99384, Cores: 130},
		Free:     gpushare.Amount{Slots: 46, MemoryMiB: 2*81920 + 2*32768 + 15360 - 99384, Cores: 370}}, l.Summary())
	require.Empty(t, l.Problems())

	eventually := func(what string, cond func() bool) {
		t.Helper()
		require.Eventually(t, cond, 30*time.Second, 20*time.Millisecond, what)
	}
	// A graceful delete leaves the pod terminating (no kubelet confirms it):
	// it still counts, as in HAMi. Forcing the delete frees its GPUs.
	require.NoError(t, cs.CoreV1().Pods("ml").Delete(ctx, "train", metav1.DeleteOptions{}))
	eventually("terminating seen", func() bool {
		p, err := cs.CoreV1().Pods("ml").Get(ctx, "train", metav1.GetOptions{})
		return err == nil && p.DeletionTimestamp != nil
	})
	time.Sleep(200 * time.Millisecond)
	require.Equal(t, int64(40000), used("gpu-a100")[0].MemoryMiB, "terminating pods count")
	zero := int64(0)
	require.NoError(t, cs.CoreV1().Pods("ml").Delete(ctx, "train", metav1.DeleteOptions{GracePeriodSeconds: &zero}))
	eventually("delete frees", func() bool {
		u := used("gpu-a100")
		return len(u) == 2 && u[0] == (gpushare.Amount{}) && u[1] == (gpushare.Amount{})
	})
	// A pod that finishes stops counting.
	eval, err := cs.CoreV1().Pods("ml").Get(ctx, "eval", metav1.GetOptions{})
	require.NoError(t, err)
	eval.Status.Phase = corev1.PodSucceeded
	_, err = cs.CoreV1().Pods("ml").UpdateStatus(ctx, eval, metav1.UpdateOptions{})
	require.NoError(t, err)
	eventually("Succeeded frees", func() bool { return used("gpu-v100")[0] == (gpushare.Amount{}) })
	// HAMi places the waiting pod: Fit agrees with an annotation patch.
	waiting, err := cs.CoreV1().Pods("web").Get(ctx, "waiting", metav1.GetOptions{})
	require.NoError(t, err)
	req, err := gpushare.NewPodRequest(waiting, gpushare.Config{})
	require.NoError(t, err)
	pl, err := l.Fit(req)
	require.NoError(t, err)
	require.Equal(t, "gpu-t4", pl.Node, "binpack: the T4 node is the fullest")
	waiting.Annotations = pl.Annotations(time.Now())
	waiting.Spec.NodeName = "" // spec.nodeName is immutable; the annotation is what counts
	_, err = cs.CoreV1().Pods("web").Update(ctx, waiting, metav1.UpdateOptions{})
	require.NoError(t, err)
	eventually("new allocation counts", func() bool {
		return used("gpu-t4")[0] == gpushare.Amount{Slots: 2, MemoryMiB: 4000, Cores: 40}
	})
	require.Equal(t, []gpushare.NamespaceUsage{
		{Namespace: "web", Pods: 2, GPUs: 1, Used: gpushare.Amount{Slots: 2, MemoryMiB: 4000, Cores: 40}},
	}, l.Namespaces())

	// Deleting a node drops its GPUs.
	require.NoError(t, cs.CoreV1().Nodes().Delete(ctx, "gpu-a100", metav1.DeleteOptions{}))
	eventually("node deleted", func() bool { _, ok := l.Node("gpu-a100"); return !ok })

	// The device plugin re-registers the T4 node with a cordon and a bad
	// value on the V100 node: the ledger follows and reports the problem.
	t4, err := cs.CoreV1().Nodes().Get(ctx, "gpu-t4", metav1.GetOptions{})
	require.NoError(t, err)
	t4.Annotations[gpushare.AnnotationCordon] = "GPU-t4-0"
	_, err = cs.CoreV1().Nodes().Update(ctx, t4, metav1.UpdateOptions{})
	require.NoError(t, err)
	v100, err := cs.CoreV1().Nodes().Get(ctx, "gpu-v100", metav1.GetOptions{})
	require.NoError(t, err)
	v100.Annotations[gpushare.AnnotationRegister] = "GPU-v100-0,10,32768:"
	_, err = cs.CoreV1().Nodes().Update(ctx, v100, metav1.UpdateOptions{})
	require.NoError(t, err)
	eventually("cordon and problem seen", func() bool {
		nu, _ := l.Node("gpu-t4")
		_, bad := l.Problems()["node/gpu-v100"]
		return len(nu.GPUs) == 1 && nu.GPUs[0].Cordoned && bad
	})
	_, err = l.Fit(req)
	fe := gpuReasons(t, err)
	require.Equal(t, gpushare.ReasonCardCordoned, fe["GPU-t4-0"])
	require.Equal(t, gpushare.ReasonNodeNotRegistered, fe["gpu-v100"])
}

const a100Type, t4Type = "NVIDIA A100-SXM4-80GB", "NVIDIA-Tesla T4"

func share(uuid string, mem, cores int32) gpushare.DeviceAllocation {
	return gpushare.DeviceAllocation{UUID: uuid, Type: gpushare.VendorNVIDIA, MemoryMiB: mem, Cores: cores}
}

// gpuReasons maps each GPU (or unregistered node) of a *FitError to its reason.
func gpuReasons(t *testing.T, err error) map[string]gpushare.Reason {
	t.Helper()
	var fe *gpushare.FitError
	require.ErrorAs(t, err, &fe)
	out := map[string]gpushare.Reason{}
	for _, n := range fe.Nodes {
		for _, g := range n.GPUs {
			out[g.ID] = g.Reason
		}
		if len(n.GPUs) == 0 {
			out[n.Node] = n.Reason
		}
	}
	return out
}
