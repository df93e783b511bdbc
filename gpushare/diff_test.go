package gpushare_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cozystack/tenantkit/gpushare"
	"github.com/cozystack/tenantkit/gpushare/gpusharetest"
	"github.com/cozystack/tenantkit/gpushare/internal/hamiref"
)

// Agreement asked of the differential tests, in percent. Before the
// fidelity work of issue 12 the code agreed on 31/60 table cells, 3630/8000
// random decisions and 4897/6000 Allocate verdicts (measured with these
// tests as first committed, in 1b458c8: before the blocker column, the
// mutex placements and the devices without "NVIDIA" in their type).
//
// Issue 20 (hamiref re-read from HAMi v2.10.0, corpora with NVIDIA-typed
// devices, HAMi's bytes and NumaNotFit compared, pods committed as HAMi
// annotates them): before its gpushare changes, with these corpora,
// 13841/20000 random decisions (GPU picks and bytes 16530, usage 16952,
// node score 19284, fail reasons 19602), 2900/12000 pod-handler usage
// states, 547/1200 request derivations; on fresh inputs
// (TENANTKIT_DIFF_SEED=5000) 14261/20000, 3130/12000, 530/1200. After,
// all agree on both.
const (
	wantTableAgreement  = 100.0
	wantRandomAgreement = 100.0
	wantAllocAgreement  = 100.0
)

// tableNodes is the 4-node × 4-GPU table: two A100 nodes, an L40S node and
// an A100 node with 4 slots per card; GPUs 0 and 1 on NUMA node 0, 2 and 3
// on NUMA node 1.
func tableNodes() []diffNode {
	var out []diffNode
	for i, m := range []struct {
		model string
		mem   int32
		slots int32
	}{{a100Type, 81920, 10}, {a100Type, 81920, 10}, {"NVIDIA L40S", 46068, 10}, {a100Type, 81920, 4}} {
		name := fmt.Sprintf("n%d", i+1)
		devs := gpusharetest.GPUs(name, 4, m.model, m.mem)
		for j := range devs {
			devs[j].NUMA, devs[j].Count = j/2, m.slots
		}
		out = append(out, diffNode{name: name, devs: devs})
	}
	return out
}

func tableHeld() []gpushare.Placement {
	return []gpushare.Placement{
		held("a", "n2", gpushare.ContainerAllocation{share("GPU-n2-1", 8000, 20)}),
		held("b", "n3", gpushare.ContainerAllocation{share("GPU-n3-2", 20000, 50)}),
		held("c", "n3", gpushare.ContainerAllocation{share("GPU-n3-0", 4000, 0)}),
		held("d", "n4", gpushare.ContainerAllocation{share("GPU-n4-3", 81920, 100)}),
	}
}

// tablePods are the 20 pods of the table, placed in order.
func tablePods() []gpushare.PodRequest {
	c := func(n, mem, cores int32) gpushare.ContainerRequest {
		return gpushare.ContainerRequest{Name: "main", Count: n, MemoryMiB: mem, Cores: cores}
	}
	pct := func(n, pct, cores int32) gpushare.ContainerRequest {
		return gpushare.ContainerRequest{Name: "main", Count: n, MemoryPercent: pct, Cores: cores}
	}
	numa := func(r gpushare.PodRequest) gpushare.PodRequest { r.Selectors.NUMABind = true; return r }
	two := func(a, b gpushare.ContainerRequest) gpushare.PodRequest {
		a.Name, b.Name = "a", "b"
		return ask("", a, b)
	}
	pods := []gpushare.PodRequest{
		ask("", c(1, 4000, 10)), ask("", c(1, 4000, 10)), ask("", c(2, 8000, 20)), ask("", pct(1, 100, 100)),
		ask("", c(1, 16000, 0)), ask("", pct(1, 50, 30)), numa(ask("", c(2, 10000, 0))), ask("", c(1, 2000, 100)),
		two(c(1, 6000, 10), c(1, 6000, 10)), ask("", c(1, 30000, 25)), ask("", c(3, 5000, 10)), ask("", c(1, 1000, 0)),
		numa(ask("", c(1, 12000, 40))), ask("", c(2, 20000, 50)), ask("", pct(1, 25, 0)), ask("", c(4, 2000, 5)),
		ask("", c(1, 40000, 60)), two(c(2, 3000, 0), c(1, 3000, 20)), numa(ask("", c(1, 9000, 35))), ask("", c(1, 70000, 80)),
	}
	for i := range pods {
		pods[i].Name = fmt.Sprintf("pod-%02d", i+1)
	}
	return pods
}

// TestDifferentialTable places the 20 table pods under three policies —
// binpack (node and GPU binpack), spread (node and GPU spread) and chain
// (node binpack, GPU chain "numa,binpack" of v2.10) — and compares every
// decision with HAMi's: 60 cells.
func TestDifferentialTable(t *testing.T) {
	var total tally
	for _, pol := range []struct {
		name string
		node gpushare.NodePolicy
		gpu  gpushare.GPUPolicy
	}{{"binpack", gpushare.NodeBinpack, gpushare.GPUBinpack}, {"spread", gpushare.NodeSpread, gpushare.GPUSpread},
		{"chain", gpushare.NodeBinpack, "numa,binpack"}} {
		var tl tally
		w := newWorld(t, gpushare.Config{NodePolicy: pol.node, GPUPolicy: pol.gpu, CollapseInitContainers: true}, tableNodes())
		for _, p := range tableHeld() {
			require.NoError(t, w.ledger.Allocate(p))
			w.held = append(w.held, p)
		}
		for _, r := range tablePods() {
			w.decide(t, &tl, r)
		}
		t.Logf("%s: %v %v", pol.name, &tl, tl.diffs)
		total.add(&tl)
	}
	t.Logf("table: %v", &total)
	require.Equal(t, 60, total.cases)
	require.GreaterOrEqual(t, 100*float64(total.agree)/float64(total.cases), wantTableAgreement, "%v", &total)
}

func (t *tally) add(o *tally) {
	t.cases += o.cases
	t.agree += o.agree
	t.outcome += o.outcome
	t.node += o.node
	t.gpus += o.gpus
	t.score += o.score
	t.reasons += o.reasons
	t.blocker += o.blocker
	t.nodeSum += o.nodeSum
}

// randomNodes draws 2–5 nodes of 1–8 GPUs (sometimes 16, where Go's sort
// leaves insertion sort), with random NUMA nodes, split counts, health,
// cordons, core scaling, a few types without "NVIDIA", and registration
// orders that are not index order.
func randomNodes(rng *rand.Rand) []diffNode {
	models := gpusharetest.Models()
	nodes := make([]diffNode, 2+rng.IntN(4))
	for i := range nodes {
		m := models[rng.IntN(len(models))]
		n := 1 + rng.IntN(8)
		if rng.IntN(10) == 0 {
			n = 16
		}
		name := fmt.Sprintf("node-%d", i)
		devs := gpusharetest.GPUs(name, n, m.Type, m.MemoryMiB)
		for j := range devs {
			devs[j].NUMA = rng.IntN(2)
			devs[j].Count = int32(2 + rng.IntN(9))
			devs[j].Health = rng.IntN(15) != 0
			if rng.IntN(12) == 0 {
				devs[j].Cores = 200 // deviceCoreScaling 2
			}
			switch rng.IntN(25) {
			case 0:
				devs[j].Type = "Tesla V100-PCIE-32GB" // named before v2.8's NVIDIA- prefix: not an NVIDIA device to HAMi's Fit
			case 1:
				devs[j].Type = gpushare.VendorNVIDIA // exactly the request type: scored with the request, placeholders written
			}
		}
		if rng.IntN(3) == 0 {
			rng.Shuffle(len(devs), func(a, b int) { devs[a], devs[b] = devs[b], devs[a] })
		}
		nodes[i] = diffNode{name: name, devs: devs}
		if rng.IntN(5) == 0 {
			nodes[i].cordon = []string{devs[rng.IntN(n)].ID}
		}
	}
	return nodes
}

var randomGPUPolicies = []gpushare.GPUPolicy{"", gpushare.GPUSpread, gpushare.GPUBinpack, gpushare.GPUNUMA, gpushare.GPUMutex,
	"mutex,binpack", "binpack,numa", "numa,spread", "spread,numa", "numa,binpack", " binpack", "mutex,numa"}

// randomPod draws a pod: 1–3 containers (some without GPUs, some init
// containers), 1–3 GPUs each, memory in MiB or percent or whole cards,
// 0–100 cores, and now and then policies, numa-bind, selectors or weights.
func randomPod(rng *rand.Rand, name string, nodes []diffNode) gpushare.PodRequest {
	r := gpushare.PodRequest{Namespace: "new", Name: name}
	for i := range 1 + rng.IntN(3) {
		c := gpushare.ContainerRequest{Name: fmt.Sprintf("c%d", i), Count: int32(1 + rng.IntN(10)/7 + rng.IntN(10)/9),
			Cores: []int32{0, 0, 10, 25, 50, 100}[rng.IntN(6)]}
		switch rng.IntN(4) {
		case 0:
			c.MemoryPercent = int32(10 * (1 + rng.IntN(10)))
		case 1:
			c.MemoryPercent = 0 // whole card
		default:
			c.MemoryMiB = int32(512 << rng.IntN(7))
		}
		if rng.IntN(6) == 0 {
			c.Count = 0
		}
		r.Containers = append(r.Containers, c)
	}
	if rng.IntN(5) == 0 {
		r.Containers = append([]gpushare.ContainerRequest{{Name: "init", Init: true, Count: int32(1 + rng.IntN(2)),
			MemoryMiB: int32(1024 << rng.IntN(5)), Cores: []int32{0, 30, 100}[rng.IntN(3)]}}, r.Containers...)
	}
	if r.GPUs() == 0 {
		r.Containers[len(r.Containers)-1].Count = 1
	}
	if rng.IntN(3) == 0 {
		r.NodePolicy = []gpushare.NodePolicy{gpushare.NodeBinpack, gpushare.NodeSpread}[rng.IntN(2)]
	}
	r.GPUPolicy = randomGPUPolicies[rng.IntN(len(randomGPUPolicies))]
	r.Selectors.NUMABind = rng.IntN(6) == 0
	switch rng.IntN(12) {
	case 0:
		r.Selectors.UseTypes = []string{"a100", "t4"}
	case 1:
		r.Selectors.NoUseTypes = []string{"L40S"}
	case 2:
		n := nodes[rng.IntN(len(nodes))]
		r.Selectors.NoUseUUIDs = []string{n.devs[rng.IntN(len(n.devs))].ID}
	case 3:
		n := nodes[rng.IntN(len(nodes))]
		r.Selectors.UseUUIDs = []string{n.devs[0].ID, n.devs[len(n.devs)-1].ID}
	}
	if rng.IntN(8) == 0 {
		r.Weights = gpushare.Weights{Slot: int32(rng.IntN(3)), Core: int32(rng.IntN(3)), Memory: 1 + int32(rng.IntN(3))}
	}
	return r
}

// diffSeed is where the random corpora start: TENANTKIT_DIFF_SEED moves
// them to fresh inputs (0 when unset).
func diffSeed(t *testing.T) int {
	v := os.Getenv("TENANTKIT_DIFF_SEED")
	if v == "" {
		return 0
	}
	n, err := strconv.Atoi(v)
	require.NoError(t, err, "TENANTKIT_DIFF_SEED")
	return n
}

// TestDifferentialRandom compares decisions on seeded random clusters and
// pod streams (1000 clusters × 20 pods, 80 under -short), releasing pods
// now and then so usage goes up and down.
func TestDifferentialRandom(t *testing.T) {
	clusters := 1000
	if testing.Short() {
		clusters = 80
	}
	var total tally
	var quotaClass [quotaClasses]int
	base := diffSeed(t)
	for seed := base; seed < base+clusters; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 12))
		cfg := gpushare.Config{CollapseInitContainers: true}
		if seed%2 == 1 {
			cfg.NodePolicy, cfg.GPUPolicy = gpushare.NodeSpread, gpushare.GPUBinpack
		}
		nodes := randomNodes(rng)
		w := newWorld(t, cfg, nodes)
		class := w.drawQuota(rng)
		quotaClass[class]++
		for i := range 20 {
			if class == quotaUpdated && i == 10 {
				w.setQuota("new", "gpu", randomHard(rng, quotaSet))
			}
			if len(w.held) > 0 && rng.IntN(5) == 0 {
				k := rng.IntN(len(w.held))
				w.ledger.Release(w.held[k].Namespace, w.held[k].Name)
				if w.ref != nil { // onDelPod: RmUsage(pod, pi.Devices)
					key := usageKey(w.held[k].Namespace, w.held[k].Name)
					w.ref.RmUsage(w.held[k].Namespace, w.usage[key])
					delete(w.usage, key)
				}
				w.held = append(w.held[:k], w.held[k+1:]...)
			}
			w.decide(t, &total, randomPod(rng, fmt.Sprintf("s%d-p%d", seed, i), nodes))
		}
	}
	t.Logf("random: %v %v; no-fit blockers: %v; quota classes (none, set, zero, unset, updated): %v", &total, total.diffs, total.blockers, quotaClass)
	require.GreaterOrEqual(t, 100*float64(total.agree)/float64(total.cases), wantRandomAgreement, "%v %v", &total, total.diffs)
}

// TestDifferentialAllocate commits random hand-made placements with
// Allocate and compares its verdict with HAMi's per-device rules (every
// check Fit applies to a device's usage, each device once per container).
func TestDifferentialAllocate(t *testing.T) {
	cases, agree := 0, 0
	var diffs []string
	for seed := range 200 {
		rng := rand.New(rand.NewPCG(uint64(seed), 34))
		nodes := randomNodes(rng)
		w := newWorld(t, gpushare.Config{CollapseInitContainers: true}, nodes)
		for i := range 30 {
			ni := rng.IntN(len(nodes))
			n := nodes[ni]
			p := gpushare.Placement{Namespace: "a", Name: fmt.Sprintf("p%d", i), Node: n.name}
			if rng.IntN(4) == 0 {
				p.InitContainers = 1
			}
			for range p.InitContainers + 1 + rng.IntN(2) {
				var c gpushare.ContainerAllocation
				for range 1 + rng.IntN(2) {
					d := n.devs[rng.IntN(len(n.devs))]
					c = append(c, share(d.ID, int32(rng.IntN(int(d.MemoryMiB)/2)), []int32{0, 0, 20, 50, 100}[rng.IntN(5)]))
				}
				p.Containers = append(p.Containers, c)
			}
			mutex := rng.IntN(6) == 0
			if mutex {
				p.GPUPolicy = gpushare.GPUMutex
			}
			want := hamiref.Admit(w.refNodes()[ni], refAllocs(p.Containers), p.InitContainers, mutex)
			err := w.ledger.Allocate(p)
			cases++
			if (want == "") == (err == nil) {
				agree++
			} else if len(diffs) < 5 {
				diffs = append(diffs, fmt.Sprintf("seed %d %s: HAMi %q, Allocate %v", seed, p.Containers, want, err))
			}
			if err == nil {
				w.held = append(w.held, p)
			} else if !errors.Is(err, gpushare.ErrOverAllocation) && !errors.Is(err, gpushare.ErrGPUConflict) {
				require.NoError(t, err)
			}
		}
	}
	pct := 100 * float64(agree) / float64(cases)
	t.Logf("allocate: %d/%d verdicts agree (%.1f%%) %v", agree, cases, pct, diffs)
	require.GreaterOrEqual(t, pct, wantAllocAgreement, "%v", diffs)
}
