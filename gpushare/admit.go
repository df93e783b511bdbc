package gpushare

// The per-GPU rules of HAMi's NVIDIA Fit (pkg/device/nvidia/device.go),
// in one place: Fit applies them to choose GPUs, Allocate applies them
// again when a placement is committed, so that no rule holds at Fit time
// and not at commit. Between the two halves Fit checks the pod's own
// selectors (type, vgpu-mode, NUMA binding, UUID), in HAMi's order.

// gpuState is the first half: the GPU's own state, health then cordon.
func gpuState(g *gpu) Reason {
	switch {
	case !g.dev.Health:
		return ReasonCardNotHealth
	case g.cordoned:
		return ReasonCardCordoned
	}
	return ""
}

// usageRule is the second half, against the GPU's usage used, for a share
// of mem MiB and cores percent: the slot limit, the mutex filter, memory,
// cores, the exclusive-card rule (100 cores on a 100-core card needs it
// unused), the saturated-card rule (a 0-core share cannot join a card whose
// cores are all allocated), and gpushare's refusal to place on MIG-mode
// GPUs.
func usageRule(g *gpu, used Amount, mem, cores int64, mutex bool) Reason {
	if r := slotRule(g, used, mutex); r != "" {
		return r
	}
	return capacityRule(g, used, mem, cores)
}

// slotRule is usageRule's first part, the checks HAMi makes before its
// namespace quota check (fitQuota, pkg/device/nvidia/device.go@v2.10.0):
// the slot limit and the mutex filter.
func slotRule(g *gpu, used Amount, mutex bool) Reason {
	switch {
	case int64(g.dev.Count) <= used.Slots:
		return ReasonCardTimeSlicingExhausted
	case mutex && used.Slots > 0:
		return ReasonExclusiveDeviceAllocateConflict
	}
	return ""
}

// capacityRule is usageRule's part after the quota check.
func capacityRule(g *gpu, used Amount, mem, cores int64) Reason {
	d := &g.dev
	switch {
	case int64(d.MemoryMiB)-used.MemoryMiB < mem:
		return ReasonCardInsufficientMemory
	case int64(d.Cores)-used.Cores < cores:
		return ReasonCardInsufficientCore
	case d.Cores == 100 && cores == 100 && used.Slots > 0:
		return ReasonExclusiveDeviceAllocateConflict
	case d.Cores != 0 && used.Cores == int64(d.Cores) && cores == 0:
		return ReasonCardComputeUnitsExhausted
	case d.Mode == ModeMIG:
		return ReasonCardMIGUnsupported
	}
	return ""
}

// admitGPU is every per-GPU rule that does not depend on the pod's
// selectors: what Allocate checks for each share.
func admitGPU(g *gpu, used Amount, mem, cores int64, mutex bool) Reason {
	if r := gpuState(g); r != "" {
		return r
	}
	return usageRule(g, used, mem, cores, mutex)
}

// capacityReason reports reasons that mean "not enough room", as opposed
// to a rule about sharing.
func capacityReason(r Reason) bool {
	switch r {
	case ReasonCardTimeSlicingExhausted, ReasonCardInsufficientMemory, ReasonCardInsufficientCore:
		return true
	}
	return false
}
