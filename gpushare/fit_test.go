package gpushare_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/cozystack/tenantkit/gpushare"
	"github.com/cozystack/tenantkit/gpushare/gpusharetest"
)

const a100Type, t4Type = "NVIDIA A100-SXM4-80GB", "NVIDIA-Tesla T4"

func share(uuid string, mem, cores int32) gpushare.DeviceAllocation {
	return gpushare.DeviceAllocation{UUID: uuid, Type: gpushare.VendorNVIDIA, MemoryMiB: mem, Cores: cores}
}

func held(name, node string, ctrs ...gpushare.ContainerAllocation) gpushare.Placement {
	return gpushare.Placement{Namespace: "held", Name: name, Node: node, Containers: ctrs}
}

func ask(name string, ctrs ...gpushare.ContainerRequest) gpushare.PodRequest {
	for i := range ctrs {
		if ctrs[i].Name == "" {
			ctrs[i].Name = "main"
		}
	}
	return gpushare.PodRequest{Namespace: "new", Name: name, Containers: ctrs}
}

func newLedger(t *testing.T, cfg gpushare.Config, nodes []*corev1.Node, held ...gpushare.Placement) *gpushare.Ledger {
	t.Helper()
	l, err := gpushare.NewLedger(cfg)
	require.NoError(t, err)
	for _, n := range nodes {
		require.NoError(t, l.SetNode(n))
	}
	for _, p := range held {
		require.NoError(t, l.SetPod(gpusharetest.AllocatedPodT(t, p)))
	}
	return l
}

// workedExample is §5.3 of HAMi's notes: GPU0 of node "busy" holds two
// tasks (20000 MiB/30 cores and 10000 MiB/0 cores), GPU1 is idle; node
// "empty" has two idle A100s. Node scores: busy 4.33, empty 0.
func workedExample(t *testing.T, cfg gpushare.Config) *gpushare.Ledger {
	return newLedger(t, cfg,
		[]*corev1.Node{
			gpusharetest.NodeT(t, "busy", gpusharetest.GPUs("busy", 2, a100Type, 81920)...),
			gpusharetest.NodeT(t, "empty", gpusharetest.GPUs("empty", 2, a100Type, 81920)...),
		},
		held("a", "busy", gpushare.ContainerAllocation{share("GPU-busy-0", 20000, 30)}),
		held("b", "busy", gpushare.ContainerAllocation{share("GPU-busy-0", 10000, 0)}),
	)
}

func TestFitPolicies(t *testing.T) {
	pod := gpushare.ContainerRequest{Count: 1, MemoryMiB: 16000, Cores: 20}
	for _, tc := range []struct {
		name  string
		cfg   gpushare.Config
		annos func(*gpushare.PodRequest)
		node  string
		alloc string
	}{
		{"default: node binpack, GPU spread", gpushare.Config{}, nil, "busy", "GPU-busy-1,NVIDIA,16000,20:;"},
		{"GPU binpack takes the fuller card", gpushare.Config{GPUPolicy: gpushare.GPUBinpack}, nil, "busy", "GPU-busy-0,NVIDIA,16000,20:;"},
		// HAMi walks its sorted list from the end: of two idle cards on one
		// NUMA node it takes the one registered later.
		{"node spread takes the empty node, the later card on a tie", gpushare.Config{NodePolicy: gpushare.NodeSpread}, nil, "empty", "GPU-empty-1,NVIDIA,16000,20:;"},
		{"pod annotations override the defaults", gpushare.Config{},
			func(r *gpushare.PodRequest) { r.NodePolicy, r.GPUPolicy = gpushare.NodeSpread, gpushare.GPUBinpack },
			"empty", "GPU-empty-1,NVIDIA,16000,20:;"},
		{"mutex skips busy cards even with binpack", gpushare.Config{},
			func(r *gpushare.PodRequest) { r.GPUPolicy = "mutex,binpack" }, "busy", "GPU-busy-1,NVIDIA,16000,20:;"},
		{"use-gpuuuid pins a card", gpushare.Config{},
			func(r *gpushare.PodRequest) { r.Selectors.UseUUIDs = []string{"GPU-empty-1"} }, "empty", "GPU-empty-1,NVIDIA,16000,20:;"},
		{"nouse-gpuuuid excludes one", gpushare.Config{},
			func(r *gpushare.PodRequest) { r.Selectors.NoUseUUIDs = []string{"GPU-busy-1"} }, "busy", "GPU-busy-0,NVIDIA,16000,20:;"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := workedExample(t, tc.cfg)
			r := ask("p", pod)
			if tc.annos != nil {
				tc.annos(&r)
			}
			pl, err := l.Fit(r)
			require.NoError(t, err)
			require.Equal(t, tc.node, pl.Node)
			require.Equal(t, tc.alloc, pl.Containers.String())
		})
	}
}

func gpuReasons(t *testing.T, err error) map[string]gpushare.Reason {
	t.Helper()
	var fe *gpushare.FitError
	require.ErrorAs(t, err, &fe)
	require.ErrorIs(t, err, gpushare.ErrNoFit)
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

func TestFitExclusiveCards(t *testing.T) {
	nodes := []*corev1.Node{gpusharetest.NodeT(t, "n", gpusharetest.GPUs("n", 2, a100Type, 81920)...)}
	// GPU0 holds a 0-core task; an exclusive (100-core) request needs an
	// idle card, even when binpack tries GPU0 first.
	l := newLedger(t, gpushare.Config{GPUPolicy: gpushare.GPUBinpack}, nodes,
		held("zero", "n", gpushare.ContainerAllocation{share("GPU-n-0", 1000, 0)}))
	exclusive := gpushare.ContainerRequest{Count: 1, MemoryMiB: 1000, Cores: 100}
	pl, err := l.Place(ask("exclusive", exclusive))
	require.NoError(t, err)
	require.Equal(t, "GPU-n-1,NVIDIA,1000,100:;", pl.Containers.String())

	_, err = l.Fit(ask("exclusive-2", exclusive))
	require.Equal(t, map[string]gpushare.Reason{
		"GPU-n-0": gpushare.ReasonExclusiveDeviceAllocateConflict,
		"GPU-n-1": gpushare.ReasonCardInsufficientCore,
	}, gpuReasons(t, err))

	// A 0-core task cannot join the saturated card; it goes to GPU0.
	_, err = l.Fit(ask("zero-2", gpushare.ContainerRequest{Count: 1, MemoryMiB: 1000, Cores: 0, Name: "x"},
		gpushare.ContainerRequest{Count: 2, MemoryMiB: 1000}))
	require.Equal(t, map[string]gpushare.Reason{
		"GPU-n-1": gpushare.ReasonCardComputeUnitsExhausted,
	}, gpuReasons(t, err), "second container: only GPU0 can take a 0-core task")
	pl, err = l.Fit(ask("zero-3", gpushare.ContainerRequest{Count: 1, MemoryMiB: 1000}))
	require.NoError(t, err)
	require.Equal(t, "GPU-n-0,NVIDIA,1000,0:;", pl.Containers.String())

	// A bare nvidia.com/gpu: 1 (whole memory, 100 cores) fits nowhere now.
	_, err = l.Fit(ask("whole", gpushare.ContainerRequest{Count: 1, MemoryPercent: 100, Cores: 100}))
	require.Equal(t, map[string]gpushare.Reason{
		"GPU-n-0": gpushare.ReasonCardInsufficientMemory,
		"GPU-n-1": gpushare.ReasonCardInsufficientMemory,
	}, gpuReasons(t, err))
}

func TestFitTypeSelectors(t *testing.T) {
	nodes := []*corev1.Node{
		gpusharetest.NodeT(t, "a100", gpusharetest.GPUs("a100", 2, a100Type, 81920)...),
		gpusharetest.NodeT(t, "t4", gpusharetest.GPUs("t4", 2, t4Type, 15360)...),
	}
	// The A100 node is fuller, so binpack prefers it...
	l := newLedger(t, gpushare.Config{}, nodes, held("x", "a100", gpushare.ContainerAllocation{share("GPU-a100-0", 8000, 10)}))
	r := ask("p", gpushare.ContainerRequest{Count: 1, MemoryMiB: 4000, Cores: 10})
	pl, err := l.Fit(r)
	require.NoError(t, err)
	require.Equal(t, "a100", pl.Node)
	// ...unless the pod asks for a T4 (case-insensitive substring)...
	r.Selectors.UseTypes = []string{"t4"}
	pl, err = l.Fit(r)
	require.NoError(t, err)
	require.Equal(t, "t4", pl.Node)
	// ...or excludes A100s.
	r.Selectors = gpushare.Selectors{NoUseTypes: []string{"A100"}}
	pl, err = l.Fit(r)
	require.NoError(t, err)
	require.Equal(t, "t4", pl.Node)
	// Nothing is both.
	r.Selectors = gpushare.Selectors{UseTypes: []string{"A100"}, NoUseTypes: []string{"SXM4"}}
	_, err = l.Fit(r)
	require.Equal(t, gpushare.ReasonCardTypeMismatch, gpuReasons(t, err)["GPU-t4-1"])
	require.ErrorContains(t, err, "type NVIDIA-Tesla T4 not in nvidia.com/use-gputype=A100")
	// vgpu-mode mig matches no hami-core card.
	r.Selectors = gpushare.Selectors{Mode: gpushare.ModeMIG}
	_, err = l.Fit(r)
	require.Equal(t, gpushare.ReasonCardTypeMismatch, gpuReasons(t, err)["GPU-a100-0"])
}

func TestFitMultiGPU(t *testing.T) {
	nodes := []*corev1.Node{
		gpusharetest.NodeT(t, "one", gpusharetest.GPUs("one", 1, a100Type, 81920)...),
		gpusharetest.NodeT(t, "four", gpusharetest.GPUs("four", 4, a100Type, 81920)...),
	}
	l := newLedger(t, gpushare.Config{}, nodes,
		held("x", "four", gpushare.ContainerAllocation{share("GPU-four-2", 40000, 50)}),
		held("y", "four", gpushare.ContainerAllocation{share("GPU-four-3", 20000, 20)}),
	)
	two := gpushare.ContainerRequest{Count: 2, MemoryMiB: 10000, Cores: 10}
	// Spread: the two emptiest cards, each once, the later one first (HAMi
	// walks its sorted list from the end).
	pl, err := l.Fit(ask("spread", two))
	require.NoError(t, err)
	require.Equal(t, "GPU-four-1,NVIDIA,10000,10:GPU-four-0,NVIDIA,10000,10:;", pl.Containers.String())
	// Binpack: the two fullest, fullest first.
	r := ask("binpack", two)
	r.GPUPolicy = gpushare.GPUBinpack
	pl, err = l.Fit(r)
	require.NoError(t, err)
	require.Equal(t, "GPU-four-2,NVIDIA,10000,10:GPU-four-3,NVIDIA,10000,10:;", pl.Containers.String())
	// Five GPUs: no node has them.
	_, err = l.Fit(ask("five", gpushare.ContainerRequest{Count: 5, MemoryMiB: 1}))
	require.Equal(t, map[string]gpushare.Reason{
		"one": gpushare.ReasonNodeInsufficientDevice, "four": gpushare.ReasonNodeInsufficientDevice,
	}, gpuReasons(t, err))
	require.ErrorContains(t, err, "one: container main: needs 5 GPUs, node has 1")
	// Two containers share a card's capacity: with binpack the first
	// (50000 MiB) goes to the fullest card with room, GPU3 (GPU2 has 41920
	// MiB free); the second (40000 MiB) would not fit beside it and goes to
	// GPU2.
	pair := ask("pair",
		gpushare.ContainerRequest{Name: "a", Count: 1, MemoryMiB: 50000},
		gpushare.ContainerRequest{Name: "b", Count: 1, MemoryMiB: 40000})
	pair.GPUPolicy = gpushare.GPUBinpack
	pl, err = l.Fit(pair)
	require.NoError(t, err)
	require.Equal(t, "four", pl.Node)
	require.Equal(t, "GPU-four-3,NVIDIA,50000,0:;GPU-four-2,NVIDIA,40000,0:;", pl.Containers.String())
}

func TestFitNUMABindCordonPercent(t *testing.T) {
	devs := gpusharetest.GPUs("n", 4, a100Type, 81920)
	devs[2].NUMA, devs[3].NUMA = 1, 1
	node := gpusharetest.NodeT(t, "n", devs...)
	l := newLedger(t, gpushare.Config{}, []*corev1.Node{node},
		held("x", "n", gpushare.ContainerAllocation{share("GPU-n-0", 81920, 0)}),
		held("y", "n", gpushare.ContainerAllocation{share("GPU-n-3", 1000, 0)}))
	r := ask("numa", gpushare.ContainerRequest{Count: 2, MemoryMiB: 1000})
	// Without numa-bind, spread takes the two emptiest cards, the idle GPU2
	// (NUMA 1) and GPU1 (NUMA 0): on equal scores the higher NUMA node
	// first, as HAMi walks its list from the end.
	pl, err := l.Fit(r)
	require.NoError(t, err)
	require.Equal(t, "GPU-n-2,NVIDIA,1000,0:GPU-n-1,NVIDIA,1000,0:;", pl.Containers.String())
	// With numa-bind both come from NUMA 1: GPUs are grouped by NUMA node,
	// and NUMA 0 has one card with room.
	r.Selectors.NUMABind = true
	pl, err = l.Fit(r)
	require.NoError(t, err)
	require.Equal(t, "GPU-n-2,NVIDIA,1000,0:GPU-n-3,NVIDIA,1000,0:;", pl.Containers.String())

	// Cordon GPU2 and GPU3: numa-bind cannot be met, and says so.
	node.Annotations[gpushare.AnnotationCordon] = "GPU-n-2,GPU-n-3"
	require.NoError(t, l.SetNode(node))
	_, err = l.Fit(r)
	require.Equal(t, gpushare.ReasonCardCordoned, gpuReasons(t, err)["GPU-n-3"])
	require.ErrorContains(t, err, "1 of 2 GPUs fit on one NUMA node")

	// A percentage resolves against the card: 25 % of 81920 MiB.
	pl, err = l.Fit(ask("pct", gpushare.ContainerRequest{Count: 1, MemoryPercent: 25}))
	require.NoError(t, err)
	require.Equal(t, "GPU-n-1,NVIDIA,20480,0:;", pl.Containers.String())
}

func TestFitExplainMessage(t *testing.T) {
	devs := []gpushare.Device{gpusharetest.GPU("GPU-1a2b", 0, t4Type, 4096)}
	l := newLedger(t, gpushare.Config{}, []*corev1.Node{gpusharetest.NodeT(t, "node-3", devs...)},
		held("x", "node-3", gpushare.ContainerAllocation{share("GPU-1a2b", 2048, 0)}))
	_, err := l.Fit(ask("big", gpushare.ContainerRequest{Count: 1, MemoryMiB: 3000}))
	require.EqualError(t, err, "pod new/big fits none of 1 GPU nodes: no GPU has 3000 MiB free (largest: 2048); "+
		"1/1 CardInsufficientMemory: node-3: GPU-1a2b: 2048 MiB free < 3000 requested (container main: 0 of 1 GPUs fit)")

	_, err = newLedger(t, gpushare.Config{}, nil).Fit(ask("x", gpushare.ContainerRequest{Count: 1}))
	require.EqualError(t, err, "pod new/x fits no node: no node registers GPUs")
	_, err = l.Fit(ask("none"))
	require.ErrorIs(t, err, gpushare.ErrInvalidRequest)
}
