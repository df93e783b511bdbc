package gpushare

import "sort"

// The order in which GPUs are tried is HAMi v2.10's, tie for tie:
// fitInDevices (pkg/scheduler/score.go) scores every GPU and sorts the
// node's device list with sort.Sort and DeviceUsageList.Less
// (pkg/scheduler/policy/gpu_policy.go), and the NVIDIA Fit
// (pkg/device/nvidia/device.go) walks the sorted list from its last element
// to its first. The list starts in registration order and stays sorted
// from one container to the next, so GPUs that compare equal keep the
// order the previous sort left them in. sort.Sort is deterministic: on up
// to 12 GPUs it is an insertion sort, which keeps equal GPUs in place;
// beyond, gpushare calls sort.Sort itself with the same comparison, so
// that even the unstable case matches.

// maxInsertion is the length up to which sort.Sort insertion-sorts.
const maxInsertion = 12

// gpuOrder is what DeviceUsageList.Less needs of a plan. It holds no
// pointers, so handing it to sort.Sort does not move the plan to the heap.
type gpuOrder struct {
	chain    bool
	keys     [3]sortKey // the chain's keys, numa first under numa-bind
	nkeys    int
	single   singleOrder
	numaBind bool
}

func newGPUOrder(g *gpuPolicy, numaBind bool) gpuOrder {
	o := gpuOrder{chain: g.chain, single: g.single, numaBind: numaBind}
	keys := g.keys
	if numaBind {
		keys = g.withNUMAFirst()
	}
	o.nkeys = copy(o.keys[:], keys)
	return o
}

// less is DeviceUsageList.Less on two working GPUs: true when a sorts
// before b, i.e. is tried after it.
func (g *gpuOrder) less(a, b *workGPU) bool {
	if g.chain {
		for _, k := range g.keys[:g.nkeys] {
			switch {
			case k == keyBinpack && a.score != b.score:
				return a.score < b.score
			case k == keySpread && a.score != b.score:
				return a.score > b.score
			case k == keyNUMA && a.g.dev.NUMA != b.g.dev.NUMA:
				return a.g.dev.NUMA < b.g.dev.NUMA
			}
		}
		return a.g.dev.Index < b.g.dev.Index
	}
	an, bn := a.g.dev.NUMA, b.g.dev.NUMA
	binpack := g.single == orderBinpack
	switch {
	case g.single == orderMutex: // busy cards first, idle ones at the tail
		if a.used.Slots != b.used.Slots {
			return a.used.Slots > b.used.Slots
		}
		return an < bn
	case g.numaBind: // NUMA groups kept together
		if an == bn {
			if binpack {
				return a.score < b.score
			}
			return a.score > b.score
		}
		if binpack {
			return an > bn
		}
		return an < bn
	case binpack:
		if a.score != b.score {
			return a.score < b.score
		}
		return an < bn
	}
	if a.score != b.score {
		return a.score > b.score
	}
	return an < bn
}

// sortGPUs scores the GPUs of work from their usage (see DeviceScore) and
// sorts order, which holds indexes into work, in HAMi's ascending order.
func (s *scratch) sortGPUs(p *plan, c *ContainerRequest, work []workGPU, order []int) {
	for i := range work {
		w := &work[i]
		w.score = DeviceScore(w.g.capacity(), w.used, scoredRequest(c, &w.g.dev), p.weights)
	}
	if len(order) > maxInsertion {
		s.sorter = gpuSorter{ord: p.ord, work: work, order: order}
		sort.Sort(&s.sorter)
		s.sorter = gpuSorter{}
		return
	}
	for i := 1; i < len(order); i++ {
		for j := i; j > 0 && p.ord.less(&work[order[j]], &work[order[j-1]]); j-- {
			order[j], order[j-1] = order[j-1], order[j]
		}
	}
}

// scoredRequest is the request ComputeScore adds to a device's usage
// (pkg/scheduler/policy/gpu_policy.go:194-214@v2.10.0): only when the
// device's registered type is exactly the request's, "NVIDIA", which a
// device plugin writes for none of NVIDIA's models but a hand-written or
// older registration may carry. One slot, the cores, and the percentage of
// the card when one is set, else gpumem (the score reads the percentage
// first, the Fit gpumem first).
func scoredRequest(c *ContainerRequest, d *Device) Amount {
	if d.Type != VendorNVIDIA {
		return Amount{}
	}
	pct := c.MemoryPercent
	if pct == 0 && c.MemoryMiB == 0 {
		pct = 100 // neither: the whole card, HAMi's percentage 100
	}
	mem := int64(c.MemoryMiB)
	if pct != 0 {
		mem = int64(int32(int64(d.MemoryMiB) * int64(pct) / 100))
	}
	return Amount{Slots: 1, MemoryMiB: mem, Cores: int64(c.Cores)}
}

// gpuSorter is sort.Interface over an order, for nodes with more GPUs than
// sort.Sort insertion-sorts.
type gpuSorter struct {
	ord   gpuOrder
	work  []workGPU
	order []int
}

func (g *gpuSorter) Len() int { return len(g.order) }

func (g *gpuSorter) Less(i, j int) bool {
	return g.ord.less(&g.work[g.order[i]], &g.work[g.order[j]])
}

func (g *gpuSorter) Swap(i, j int) { g.order[i], g.order[j] = g.order[j], g.order[i] }
