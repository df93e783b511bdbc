package gpushare

// Amount is a quantity of GPU capacity or usage.
type Amount struct {
	// Slots are tasks sharing a GPU (deviceSplitCount per card).
	Slots int64
	// MemoryMiB is device memory.
	MemoryMiB int64
	// Cores is compute in percent of a card (100 per card).
	Cores int64
}

// Add returns a + b.
func (a Amount) Add(b Amount) Amount {
	return Amount{a.Slots + b.Slots, a.MemoryMiB + b.MemoryMiB, a.Cores + b.Cores}
}

// Sub returns a - b.
func (a Amount) Sub(b Amount) Amount {
	return Amount{a.Slots - b.Slots, a.MemoryMiB - b.MemoryMiB, a.Cores - b.Cores}
}

// floor0 returns a with negative fields set to 0.
func (a Amount) floor0() Amount {
	return Amount{max(a.Slots, 0), max(a.MemoryMiB, 0), max(a.Cores, 0)}
}

// exceeds reports whether any field of a is larger than in b.
func (a Amount) exceeds(b Amount) bool {
	return a.Slots > b.Slots || a.MemoryMiB > b.MemoryMiB || a.Cores > b.Cores
}

// scoreWeight is HAMi's util.Weight.
const scoreWeight = 10

// DeviceScore is HAMi's GPU score, in HAMi's float32 arithmetic:
//
//	10 × ( w.Slot   × (request.Slots     + used.Slots)     / capacity.Slots
//	     + w.Core   × (request.Cores     + used.Cores)     / capacity.Cores
//	     + w.Memory × (request.MemoryMiB + used.MemoryMiB) / capacity.MemoryMiB )
//
// and 0 when any capacity is 0. HAMi v2.9+ adds the request only when the
// request's type equals the device's; for NVIDIA that compares "NVIDIA" with
// the registered type, usually the model, so the scheduler ranks GPUs by
// existing usage alone, and so does gpushare's Fit (it passes a zero
// request), except on a device registered with type exactly "NVIDIA",
// where Fit passes the request as HAMi does. Before v2.9 the request was
// always added; pass it to reproduce those scores. GPU0 of
// the worked example in HAMi's notes (two tasks, 30000 MiB and 30 cores used
// of 10 slots, 81920 MiB and 100 cores, asked for 1 slot, 16000 MiB and 20
// cores) scores 13.62.
func DeviceScore(capacity, used, request Amount, w Weights) float32 {
	if capacity.Slots == 0 || capacity.Cores == 0 || capacity.MemoryMiB == 0 {
		return 0
	}
	slot := float32(request.Slots+used.Slots) / float32(capacity.Slots)
	core := float32(request.Cores+used.Cores) / float32(capacity.Cores)
	mem := float32(request.MemoryMiB+used.MemoryMiB) / float32(capacity.MemoryMiB)
	return scoreWeight * (float32(w.Slot)*slot + float32(w.Core)*core + float32(w.Memory)*mem)
}

// NodeScore is HAMi's node score over all of a node's GPUs, from usage
// before the new pod: 10 × (used/capacity of slots + of cores + of memory),
// a term being 0 when its capacity is 0. Binpack takes the highest score,
// spread the lowest.
func NodeScore(capacity, used Amount) float32 {
	var s float32
	if capacity.Slots != 0 {
		s += float32(used.Slots) / float32(capacity.Slots)
	}
	if capacity.Cores != 0 {
		s += float32(used.Cores) / float32(capacity.Cores)
	}
	if capacity.MemoryMiB != 0 {
		s += float32(used.MemoryMiB) / float32(capacity.MemoryMiB)
	}
	return scoreWeight * s
}
