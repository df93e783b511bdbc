package gpushare_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cozystack/tenantkit/gpushare"
	"github.com/cozystack/tenantkit/gpushare/gpusharetest"
)

func TestLedgerCountingRules(t *testing.T) {
	node := gpusharetest.NodeT(t, "n", gpusharetest.GPUs("n", 2, a100Type, 81920)...)
	l := newLedger(t, gpushare.Config{}, []*corev1.Node{node})
	pod := func(name string, mem int32) *corev1.Pod {
		return gpusharetest.AllocatedPodT(t, held(name, "n", gpushare.ContainerAllocation{share("GPU-n-0", mem, 10)}))
	}
	running := pod("running", 1000)
	terminating := pod("terminating", 2000)
	require.NoError(t, l.SetPod(terminating)) // seen before it began terminating
	terminating = terminating.DeepCopy()
	terminating.DeletionTimestamp = &metav1.Time{Time: gpusharetest.Epoch()}
	pending := pod("pending", 4000)
	pending.Status.Phase = corev1.PodPending
	succeeded := pod("succeeded", 8000)
	succeeded.Status.Phase = corev1.PodSucceeded
	failed := pod("failed", 16000)
	failed.Status.Phase = corev1.PodFailed
	noNode := pod("no-node", 32000)
	delete(noNode.Annotations, gpushare.AnnotationNode)
	for _, p := range []*corev1.Pod{running, terminating, pending, succeeded, failed} {
		require.NoError(t, l.SetPod(p))
	}
	// An allocation naming no node is left out, as HAMi does, and said so.
	require.ErrorIs(t, l.SetPod(noNode), gpushare.ErrAllocationWithoutNode)
	require.Equal(t, gpushare.DropAllocationWithoutNode, l.Problems()["pod/held/no-node"].Reason)
	require.Len(t, l.Problems(), 1, "finished pods are not problems")
	// A pod first seen terminating is not counted, as HAMi's onAddPod
	// does (UpdatePod on an unknown pod), and said so.
	late := pod("late", 64000)
	late.DeletionTimestamp = &metav1.Time{Time: gpusharetest.Epoch()}
	require.ErrorIs(t, l.SetPod(late), gpushare.ErrTerminatingUnseen)
	require.Equal(t, gpushare.DropTerminatingUnseen, l.Problems()["pod/held/late"].Reason)
	l.DeletePod("held", "late")
	nu, ok := l.Node("n")
	require.True(t, ok)
	require.Equal(t, gpushare.Amount{Slots: 3, MemoryMiB: 7000, Cores: 30}, nu.GPUs[0].Used, "running, terminating and pending count")
	require.Equal(t, gpushare.Amount{Slots: 17, MemoryMiB: 81920*2 - 7000, Cores: 170}, nu.Free)
	require.Equal(t, 3, nu.Pods)
	require.Len(t, nu.GPUs[0].Pods, 3)

	// Finishing, deleting and adding update the ledger.
	running.Status.Phase = corev1.PodSucceeded
	require.NoError(t, l.SetPod(running))
	l.DeletePod("held", "terminating")
	require.NoError(t, l.SetPod(pod("new", 500)))
	nu, _ = l.Node("n")
	require.Equal(t, gpushare.Amount{Slots: 2, MemoryMiB: 4500, Cores: 20}, nu.GPUs[0].Used)
	require.InDelta(t, 4500.0/163840, nu.MemoryRatio(), 1e-9)
}

func TestLedgerInitContainerCollapse(t *testing.T) {
	node := gpusharetest.NodeT(t, "n", gpusharetest.GPUs("n", 1, a100Type, 81920)...)
	// One init container with 30000 MiB, two app containers with 10000 and
	// 5000 MiB, all on GPU0.
	p := held("job", "n",
		gpushare.ContainerAllocation{share("GPU-n-0", 30000, 40)},
		gpushare.ContainerAllocation{share("GPU-n-0", 10000, 10)},
		gpushare.ContainerAllocation{share("GPU-n-0", 5000, 10)},
	)
	p.InitContainers = 1
	pod := gpusharetest.AllocatedPodT(t, p)
	for _, tc := range []struct {
		name     string
		collapse bool
		initDone bool
		want     gpushare.Amount
	}{
		{"v2.9 counts every entry", false, false, gpushare.Amount{Slots: 3, MemoryMiB: 45000, Cores: 60}},
		{"v2.10 takes max(init, sum of apps)", true, false, gpushare.Amount{Slots: 2, MemoryMiB: 30000, Cores: 40}},
		{"v2.10 shrinks to apps once init succeeded", true, true, gpushare.Amount{Slots: 2, MemoryMiB: 15000, Cores: 20}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := pod.DeepCopy()
			if tc.initDone {
				p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "init-0",
					State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}}}}
			}
			l := newLedger(t, gpushare.Config{CollapseInitContainers: tc.collapse}, []*corev1.Node{node})
			require.NoError(t, l.SetPod(pod))
			require.NoError(t, l.SetPod(p))
			nu, _ := l.Node("n")
			require.Equal(t, tc.want, nu.GPUs[0].Used)
			if tc.initDone {
				// HAMi's onAddPod collapses a pod first seen with its init
				// containers done; only an update shrinks it.
				l := newLedger(t, gpushare.Config{CollapseInitContainers: true}, []*corev1.Node{node})
				require.NoError(t, l.SetPod(p))
				nu, _ := l.Node("n")
				require.Equal(t, gpushare.Amount{Slots: 2, MemoryMiB: 30000, Cores: 40}, nu.GPUs[0].Used)
			}
		})
	}
}

func TestLedgerViews(t *testing.T) {
	l := newLedger(t, gpushare.Config{}, []*corev1.Node{
		gpusharetest.NodeT(t, "a", gpusharetest.GPUs("a", 2, a100Type, 81920)...),
		gpusharetest.NodeT(t, "b", gpusharetest.GPUs("b", 1, t4Type, 15360)...),
	})
	for _, p := range []gpushare.Placement{
		{Namespace: "ml", Name: "train", Node: "a", Containers: gpushare.PodAllocation{{share("GPU-a-0", 40000, 50), share("GPU-a-1", 40000, 50)}}},
		{Namespace: "ml", Name: "serve", Node: "b", Containers: gpushare.PodAllocation{{share("GPU-b-0", 4000, 20)}}},
		{Namespace: "web", Name: "thumb", Node: "a", Containers: gpushare.PodAllocation{{share("GPU-a-0", 1000, 0)}}},
	} {
		require.NoError(t, l.Allocate(p))
	}
	require.Equal(t, []gpushare.NamespaceUsage{
		{Namespace: "ml", Pods: 2, GPUs: 3, Used: gpushare.Amount{Slots: 3, MemoryMiB: 84000, Cores: 120}},
		{Namespace: "web", Pods: 1, GPUs: 1, Used: gpushare.Amount{Slots: 1, MemoryMiB: 1000, Cores: 0}},
	}, l.Namespaces())
	s := l.Summary()
	require.Equal(t, gpushare.Summary{Nodes: 2, GPUs: 3, Pods: 3,
		Capacity: gpushare.Amount{Slots: 30, MemoryMiB: 2*81920 + 15360, Cores: 300},
		Used:     gpushare.Amount{Slots: 4, MemoryMiB: 85000, Cores: 120},
		Free:     gpushare.Amount{Slots: 26, MemoryMiB: 2*81920 + 15360 - 85000, Cores: 180}}, s)
	require.Equal(t, "85000/179200 MiB, 120/300 cores, 4/30 slots used", s.String())
	a, _ := l.Node("a")
	require.Equal(t, []gpushare.PodShare{
		{Namespace: "ml", Name: "train", Used: gpushare.Amount{Slots: 1, MemoryMiB: 40000, Cores: 50}},
		{Namespace: "web", Name: "thumb", Used: gpushare.Amount{Slots: 1, MemoryMiB: 1000}},
	}, a.GPUs[0].Pods)
	pu, ok := l.Pod("ml", "train")
	require.True(t, ok)
	require.Equal(t, "a", pu.Node)
	require.Equal(t, gpushare.Amount{Slots: 2, MemoryMiB: 80000, Cores: 100}, pu.Used)
	require.Len(t, l.Pods(), 3)
	require.Len(t, l.Nodes(), 2)
}

func TestLedgerAllocateRefuses(t *testing.T) {
	l := newLedger(t, gpushare.Config{}, []*corev1.Node{gpusharetest.NodeT(t, "n", gpusharetest.GPUs("n", 1, t4Type, 15360)...)})
	ok := held("ok", "n", gpushare.ContainerAllocation{share("GPU-n-0", 15000, 90)})
	require.NoError(t, l.Allocate(ok))
	require.ErrorIs(t, l.Allocate(ok), gpushare.ErrPodExists)
	require.ErrorIs(t, l.Allocate(held("mem", "n", gpushare.ContainerAllocation{share("GPU-n-0", 361, 0)})), gpushare.ErrOverAllocation)
	require.ErrorIs(t, l.Allocate(held("cores", "n", gpushare.ContainerAllocation{share("GPU-n-0", 1, 11)})), gpushare.ErrOverAllocation)
	require.ErrorIs(t, l.Allocate(held("gpu", "n", gpushare.ContainerAllocation{share("GPU-zz", 1, 1)})), gpushare.ErrUnknownGPU)
	require.ErrorIs(t, l.Allocate(held("node", "m", gpushare.ContainerAllocation{share("GPU-n-0", 1, 1)})), gpushare.ErrUnknownNode)
	for i := range 9 {
		require.NoError(t, l.Allocate(held("slot"+string(rune('0'+i)), "n", gpushare.ContainerAllocation{share("GPU-n-0", 0, 1)})))
	}
	require.ErrorIs(t, l.Allocate(held("slot-11", "n", gpushare.ContainerAllocation{share("GPU-n-0", 0, 0)})), gpushare.ErrOverAllocation)
	nu, _ := l.Node("n")
	require.Equal(t, gpushare.Amount{Slots: 10, MemoryMiB: 15000, Cores: 99}, nu.GPUs[0].Used, "refusals changed nothing")
	l.Release("held", "ok")
	nu, _ = l.Node("n")
	require.Equal(t, gpushare.Amount{Slots: 9, Cores: 9}, nu.GPUs[0].Used)
}

func TestLedgerProblemsAndReregistration(t *testing.T) {
	node := gpusharetest.NodeT(t, "n", gpusharetest.GPUs("n", 2, t4Type, 15360)...)
	l := newLedger(t, gpushare.Config{}, []*corev1.Node{node})
	// A pod on a GPU the node does not register yet, and one on an unknown node.
	require.NoError(t, l.SetPod(gpusharetest.AllocatedPodT(t, held("later", "n", gpushare.ContainerAllocation{share("GPU-n-2", 1000, 0)}))))
	require.NoError(t, l.SetPod(gpusharetest.AllocatedPodT(t, held("early", "m", gpushare.ContainerAllocation{share("GPU-m-0", 2000, 0)}))))
	bad := gpusharetest.AllocatedPodT(t, held("bad", "n", gpushare.ContainerAllocation{share("GPU-n-0", 1, 1)}))
	bad.Annotations[gpushare.AnnotationAllocated] = "GPU-n-0,NVIDIA,lots,1:;"
	err := l.SetPod(bad)
	require.ErrorIs(t, err, gpushare.ErrMalformedAnnotation)
	var oe *gpushare.ObjectError
	require.ErrorAs(t, err, &oe)
	require.Equal(t, gpushare.DropMalformedAllocation, oe.Reason)
	nu, _ := l.Node("n")
	require.Equal(t, gpushare.Amount{}, nu.Used, "unknown GPU and malformed pod add nothing")
	probs := l.Problems()
	require.Len(t, probs, 3, "%v", probs)
	require.Equal(t, gpushare.DropMalformedAllocation, probs["pod/held/bad"].Reason)
	require.Equal(t, gpushare.DropUnknownGPU, probs["pod/held/later"].Reason)
	require.ErrorIs(t, probs["pod/held/later"], gpushare.ErrUnknownGPU)
	require.EqualError(t, probs["pod/held/later"], "pod held/later: node n does not register GPU-n-2: gpushare: unknown GPU")
	require.Equal(t, gpushare.DropNodeNotRegistered, probs["pod/held/early"].Reason)
	require.ErrorIs(t, probs["pod/held/early"], gpushare.ErrUnknownNode)

	// The node re-registers with a third GPU; the waiting pod counts now.
	node = gpusharetest.NodeT(t, "n", gpusharetest.GPUs("n", 3, t4Type, 15360)...)
	require.NoError(t, l.SetNode(node))
	nu, _ = l.Node("n")
	require.Equal(t, gpushare.Amount{Slots: 1, MemoryMiB: 1000}, nu.GPUs[2].Used)
	// Node m appears.
	require.NoError(t, l.SetNode(gpusharetest.NodeT(t, "m", gpusharetest.GPUs("m", 1, t4Type, 15360)...)))
	mu, _ := l.Node("m")
	require.Equal(t, gpushare.Amount{Slots: 1, MemoryMiB: 2000}, mu.Used)
	require.Len(t, l.Problems(), 1, "only the malformed pod is left out now")

	// A registration that does not decode leaves the node without GPUs and is reported.
	node.Annotations[gpushare.AnnotationRegister] = "GPU-n-0,10:"
	require.ErrorIs(t, l.SetNode(node), gpushare.ErrMalformedAnnotation)
	nu, _ = l.Node("n")
	require.Empty(t, nu.GPUs)
	require.Error(t, nu.Err)
	require.Equal(t, gpushare.DropMalformedRegistration, l.Problems()["node/n"].Reason)
	require.Equal(t, gpushare.DropNodeNotRegistered, l.Problems()["pod/held/later"].Reason)
	_, err = l.Fit(ask("p", gpushare.ContainerRequest{Count: 1, MemoryMiB: 15000}))
	require.Equal(t, gpushare.ReasonNodeNotRegistered, gpuReasons(t, err)["n"])

	// Fixing the pod clears its problem; a smaller re-registration overcommits.
	bad.Annotations[gpushare.AnnotationAllocated] = "GPU-m-0,NVIDIA,15000,0:;"
	bad.Annotations[gpushare.AnnotationNode] = "m"
	require.NoError(t, l.SetPod(bad))
	require.NotContains(t, l.Problems(), "pod/held/bad")
	mu, _ = l.Node("m")
	require.True(t, mu.GPUs[0].Overcommitted)
	require.Equal(t, gpushare.Amount{Slots: 8, MemoryMiB: 0, Cores: 100}, mu.GPUs[0].Free)

	l.DeleteNode("m")
	_, ok := l.Node("m")
	require.True(t, ok, "pods keep a deleted node's entry")
	l.DeletePod("held", "early")
	l.DeletePod("held", "bad")
	_, ok = l.Node("m")
	require.False(t, ok)
}
