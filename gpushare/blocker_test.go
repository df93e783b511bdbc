package gpushare_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/cozystack/tenantkit/gpushare"
	"github.com/cozystack/tenantkit/gpushare/gpusharetest"
)

// The FitError names the real blocker, seen over all nodes, before the
// per-node and per-GPU reasons.
func TestFitBlockers(t *testing.T) {
	one := func(n int32, mem, cores int32) gpushare.ContainerRequest {
		return gpushare.ContainerRequest{Count: n, MemoryMiB: mem, Cores: cores}
	}
	// Two nodes of two A100s, NUMA 0 and 1: a holds a 0-core task on GPU0
	// (24576 MiB) and a 40-core one on GPU1 (57344 MiB); b is idle with 4
	// slots per card.
	nodes := func() []*corev1.Node {
		b := gpusharetest.GPUs("b", 2, a100Type, 81920)
		for i := range b {
			b[i].NUMA, b[i].Count = i, 4
		}
		return []*corev1.Node{gpusharetest.NodeT(t, "a", gpusharetest.GPUs("a", 2, a100Type, 81920)...), gpusharetest.NodeT(t, "b", b...)}
	}
	busyA := []gpushare.Placement{
		held("x", "a", gpushare.ContainerAllocation{share("GPU-a-0", 57344, 0)}),
		held("y", "a", gpushare.ContainerAllocation{share("GPU-a-1", 24576, 60)}),
	}
	full := func(gpu string, n int) []gpushare.Placement {
		var out []gpushare.Placement
		for i := range n {
			out = append(out, held(gpu+string(rune('a'+i)), gpu[4:5], gpushare.ContainerAllocation{share(gpu, 1, 0)}))
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		held   []gpushare.Placement
		req    gpushare.PodRequest
		kind   gpushare.BlockerKind
		detail string
	}{
		{"more GPUs than any node", nil, ask("p", one(3, 1000, 0)), gpushare.BlockTooFewGPUs, "no node has 3 GPUs (largest: 2)"},
		{"selectors match nothing", nil, func() gpushare.PodRequest {
			r := ask("p", one(1, 1000, 0))
			r.Selectors.UseTypes = []string{"H100"}
			return r
		}(), gpushare.BlockNoEligibleGPUs, "no node has 1 healthy, uncordoned GPU matching the pod's selectors (most: 0)"},
		{"slots", append(full("GPU-b-0", 4), full("GPU-b-1", 4)...), func() gpushare.PodRequest {
			r := ask("p", one(1, 1000, 0))
			r.Selectors.UseTypes = []string{"A100"}
			r.Selectors.NoUseUUIDs = []string{"GPU-a-0", "GPU-a-1"}
			return r
		}(), gpushare.BlockNoFreeSlots, "no node has 1 GPU with a free slot (most: 0)"},
		{"memory on one GPU", busyA, func() gpushare.PodRequest {
			r := ask("p", one(1, 60000, 0))
			r.Selectors.NoUseUUIDs = []string{"GPU-b-0", "GPU-b-1"}
			return r
		}(), gpushare.BlockNoMemory, "no GPU has 60000 MiB free (largest: 57344)"},
		{"memory on two GPUs", append(busyA, held("z", "b", gpushare.ContainerAllocation{share("GPU-b-1", 50000, 0)})),
			ask("p", one(2, 40000, 0)), gpushare.BlockNoMemory, "no node has 2 GPUs with 40000 MiB free (most: 1)"},
		{"cores on one GPU", append(busyA, held("z", "b", gpushare.ContainerAllocation{share("GPU-b-0", 1, 70)}),
			held("w", "b", gpushare.ContainerAllocation{share("GPU-b-1", 1, 70)})),
			func() gpushare.PodRequest {
				r := ask("p", one(1, 1000, 50))
				r.Selectors.NoUseUUIDs = []string{"GPU-a-0"}
				return r
			}(), gpushare.BlockNoCores, "no GPU has 50 cores free (largest: 40)"},
		{"exclusive cards", append(busyA, held("z", "b", gpushare.ContainerAllocation{share("GPU-b-0", 1, 0)})),
			ask("p", one(2, 1000, 100)), gpushare.BlockNoIdleCards, "no node has 2 idle cards (most: 1; 100 cores asks for a card of its own)"},
		{"mutex", append(busyA, held("z", "b", gpushare.ContainerAllocation{share("GPU-b-1", 1, 0)})), func() gpushare.PodRequest {
			r := ask("p", one(2, 1000, 10))
			r.GPUPolicy = "mutex,spread"
			return r
		}(), gpushare.BlockNoIdleCards, "no node has 2 idle cards (most: 1; the mutex policy takes idle cards only)"},
		{"saturated cards", []gpushare.Placement{
			held("x", "a", gpushare.ContainerAllocation{share("GPU-a-0", 1, 100)}), held("y", "a", gpushare.ContainerAllocation{share("GPU-a-1", 1, 100)}),
			held("z", "b", gpushare.ContainerAllocation{share("GPU-b-0", 1, 100)}), held("w", "b", gpushare.ContainerAllocation{share("GPU-b-1", 1, 100)}),
		}, ask("p", one(1, 1000, 0)), gpushare.BlockSaturatedCards,
			"no node has 1 GPU with unallocated cores (most: 0; a 0-core container cannot join a card whose cores are all allocated)"},
		{"numa-bind", busyA, func() gpushare.PodRequest {
			r := ask("p", one(2, 1000, 0))
			r.Selectors.NUMABind = true
			r.Selectors.NoUseUUIDs = []string{"GPU-a-0", "GPU-a-1"}
			return r
		}(), gpushare.BlockNoNUMANode, "no node has 2 fitting GPUs on one NUMA node (most: 1; nvidia.com/numa-bind)"},
		{"containers apart but not together", append(busyA, held("z", "b", gpushare.ContainerAllocation{share("GPU-b-0", 1, 0)})),
			ask("p", gpushare.ContainerRequest{Name: "a", Count: 1, MemoryMiB: 1000},
				gpushare.ContainerRequest{Name: "b", Count: 1, MemoryMiB: 1000, Cores: 100}, gpushare.ContainerRequest{Name: "c", Count: 1, MemoryMiB: 80000}),
			gpushare.BlockNotTogether, "each container fits on some node, but no node takes them all together"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLedger(t, gpushare.Config{}, nodes(), tc.held...)
			_, err := l.Fit(tc.req)
			var fe *gpushare.FitError
			require.ErrorAs(t, err, &fe)
			require.Equal(t, tc.kind, fe.Blocker.Kind, fe.Blocker.Detail)
			require.Equal(t, tc.detail, fe.Blocker.Detail)
			require.Contains(t, err.Error(), "GPU nodes: "+tc.detail+"; ")
			require.Len(t, fe.Nodes, 2, "the per-node reasons follow")
		})
	}
}
