package hamiref

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func a100(id string, index uint, numa int) Device {
	return Device{ID: id, Index: index, NUMA: numa, Type: "NVIDIA A100-SXM4-80GB", Mode: "hami-core", Health: true,
		Count: 10, Totalmem: 81920, Totalcore: 100}
}

// The worked example of the research notes (§5.3, §5.4): GPU0 holds 2 tasks,
// 30000 MiB and 30 cores; a pod asking 16000 MiB and 20 cores goes to the
// idle GPU1 with spread, to GPU0 with binpack; the node scores 4.33.
func TestWorkedExample(t *testing.T) {
	busy := Node{Name: "busy", Devices: []Device{a100("g0", 0, 0), a100("g1", 1, 0)}}
	busy.Devices[0].Used, busy.Devices[0].Usedmem, busy.Devices[0].Usedcores = 2, 30000, 30
	empty := Node{Name: "empty", Devices: []Device{a100("e0", 0, 0), a100("e1", 1, 0)}}
	pod := Pod{Containers: []Container{{Nums: 1, Memreq: 16000, MemPercentagereq: 101, Coresreq: 20}}}

	d := Schedule([]Node{busy, empty}, pod, "binpack", "spread")
	require.Equal(t, []string{"busy"}, d.Best)
	r, _ := d.Result("busy")
	require.InDelta(t, 4.33, r.Score, 0.005)
	require.Equal(t, [][]Alloc{{{UUID: "g1", Mem: 16000, Cores: 20}}}, r.Containers)

	pod.Annotations = map[string]string{AnnoGPUPolicy: "binpack", AnnoNodePolicy: "spread"}
	d = Schedule([]Node{busy, empty}, pod, "binpack", "spread")
	require.Equal(t, []string{"empty"}, d.Best)
	r, _ = d.Result("busy")
	require.Equal(t, [][]Alloc{{{UUID: "g0", Mem: 16000, Cores: 20}}}, r.Containers)
	// On the idle node both cards tie: the walk from the end takes the last
	// in registration order.
	r, _ = d.Result("empty")
	require.Equal(t, [][]Alloc{{{UUID: "e1", Mem: 16000, Cores: 20}}}, r.Containers)
}

// Ties: score, then NUMA ascending, then the order sort.Sort keeps; the walk
// from the end takes the higher NUMA node, then the later device.
func TestTiesTakeHigherNUMAThenLater(t *testing.T) {
	n := Node{Name: "n", Devices: []Device{a100("g0", 0, 0), a100("g1", 1, 0), a100("g2", 2, 1), a100("g3", 3, 1)}}
	pod := Pod{Containers: []Container{{Nums: 2, Memreq: 1000, MemPercentagereq: 101}}}
	for _, policy := range []string{"spread", "binpack"} {
		d := Schedule([]Node{n}, pod, "binpack", policy)
		require.Equal(t, [][]Alloc{{{UUID: "g3", Mem: 1000}, {UUID: "g2", Mem: 1000}}}, d.Nodes[0].Containers, policy)
	}
	// A chain ends with index: "numa" alone also takes the highest NUMA
	// node and index first.
	d := Schedule([]Node{n}, pod, "binpack", "numa")
	require.Equal(t, [][]Alloc{{{UUID: "g3", Mem: 1000}, {UUID: "g2", Mem: 1000}}}, d.Nodes[0].Containers)
}

// HAMi's own Fit test (nvidia device_test.go, numa-bind reverse walk):
// dev-2 and dev-1 on NUMA 0 are taken, dev-0 on NUMA 1 starts over and
// cannot give 3 cards.
func TestNUMABindResets(t *testing.T) {
	devs := []Device{a100("dev-0", 0, 1), a100("dev-1", 1, 0), a100("dev-2", 2, 0)}
	pod := Pod{Annotations: map[string]string{AnnoNUMABind: "true"}}
	_, reasons := fit(devs, Container{Nums: 3, Memreq: 100, MemPercentagereq: 101, Coresreq: 10}, pod, "spread", nil)
	require.Equal(t, 2, reasons[NumaNotFit], "len(tmpDevs[\"NVIDIA\"]): the two cards given up")
	require.Equal(t, 1, reasons[AllocatedCardsInsufficientRequest])
}

func TestExclusiveAndSaturatedRules(t *testing.T) {
	d := a100("g", 0, 0)
	d.Used, d.Usedcores = 1, 0
	require.Equal(t, ExclusiveDeviceAllocateConflict, Check(&d, 1, 100, false))
	d.Usedcores = 100
	require.Equal(t, CardInsufficientCore, Check(&d, 1, 1, false))
	require.Equal(t, CardComputeUnitsExhausted, Check(&d, 1, 0, false))
	d.Used, d.Usedcores = 1, 10
	require.Equal(t, ExclusiveDeviceAllocateConflict, Check(&d, 1, 0, true), "mutex")
	require.Empty(t, Check(&d, 1, 0, false))

	n := Node{Name: "n", Devices: []Device{a100("g0", 0, 0)}}
	require.Equal(t, CardComputeUnitsExhausted, Admit(n, [][]Alloc{{{UUID: "g0", Mem: 1, Cores: 100}}, {{UUID: "g0", Mem: 1}}}, 0, false))
	require.Empty(t, Admit(n, [][]Alloc{{{UUID: "g0", Mem: 1, Cores: 100}}, {{UUID: "g0", Mem: 1, Cores: 100}}}, 1, false),
		"init and app containers do not see each other")
	require.Equal(t, DuplicateDevice, Admit(n, [][]Alloc{{{UUID: "g0", Mem: 1}, {UUID: "g0", Mem: 1}}}, 0, false))
}

func TestRecountCollapse(t *testing.T) {
	nodes := []Node{{Name: "n", Devices: []Device{a100("g0", 0, 0)}}}
	h := Held{Node: "n", InitCount: 1, Containers: [][]Alloc{{{UUID: "g0", Mem: 30000, Cores: 40}}, {{UUID: "g0", Mem: 10000, Cores: 10}}, {{UUID: "g0", Mem: 5000, Cores: 10}}}}
	Recount(nodes, []Held{h}, false)
	require.Equal(t, [3]int32{3, 45000, 60}, [3]int32{nodes[0].Devices[0].Used, nodes[0].Devices[0].Usedmem, nodes[0].Devices[0].Usedcores})
	Recount(nodes, []Held{h}, true)
	require.Equal(t, [3]int32{2, 30000, 40}, [3]int32{nodes[0].Devices[0].Used, nodes[0].Devices[0].Usedmem, nodes[0].Devices[0].Usedcores})
}

// TestEncodePlaceholders: the R1 bytes. A GPU-less container leaves
// no entry on a node registered by model, and one on a node with a device
// typed exactly "NVIDIA".
func TestEncodePlaceholders(t *testing.T) {
	ctrs := [][]Alloc{nil, {{UUID: "GPU-a0", Mem: 1000, Cores: 10}}}
	byModel := Node{Devices: []Device{a100("GPU-a0", 0, 0)}}
	require.Equal(t, "GPU-a0,NVIDIA,1000,10:;", Encode(byModel, ctrs))
	typed := byModel
	typed.Devices = []Device{a100("GPU-a0", 0, 0)}
	typed.Devices[0].Type = "NVIDIA"
	require.Equal(t, ";GPU-a0,NVIDIA,1000,10:;", Encode(typed, ctrs))
}

// TestCacheTerminating: onAddPod skips a pod first seen terminating; a
// cached pod that begins terminating keeps counting.
func TestCacheTerminating(t *testing.T) {
	annos := map[string]string{AnnoNode: "n", AnnoAllocated: "GPU-a0,NVIDIA,1000,10:;"}
	var c Cache
	c.Add(PodEvent{Key: "a", Annotations: annos, Phase: "Running", Terminating: true})
	require.Empty(t, c.Held())
	c.Add(PodEvent{Key: "b", Annotations: annos, Phase: "Running"})
	c.Update(PodEvent{Key: "b", Annotations: annos, Phase: "Running", Terminating: true})
	require.Len(t, c.Held(), 1)
}
