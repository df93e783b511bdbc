package hamiref

import (
	"strings"
)

// HAMi's reason names (HAMi:pkg/device/common/common.go).
const (
	CardNotHealth                     = "CardNotHealth"
	CardCordoned                      = "CardCordoned"
	CardTypeMismatch                  = "CardTypeMismatch"
	NumaNotFit                        = "NumaNotFit"
	CardUUIDMismatch                  = "CardUuidMismatch"
	CardTimeSlicingExhausted          = "CardTimeSlicingExhausted"
	ExclusiveDeviceAllocateConflict   = "ExclusiveDeviceAllocateConflict"
	CardInsufficientMemory            = "CardInsufficientMemory"
	CardInsufficientCore              = "CardInsufficientCore"
	CardComputeUnitsExhausted         = "CardComputeUnitsExhausted"
	NodeInsufficientDevice            = "NodeInsufficientDevice"
	AllocatedCardsInsufficientRequest = "AllocatedCardsInsufficientRequest"
	// DuplicateDevice is not HAMi's: Fit walks each device once per
	// container, so one container never holds a device twice.
	DuplicateDevice = "DuplicateDevice"
)

// fit is HAMi:pkg/device/nvidia/device.go Fit for a hami-core node: walk
// the sorted devices from the last to the first, take each that passes
// every check until Nums are taken, count the reasons of those that do
// not.
//
// allocated is the phase's containers fitted before (scoreNode's
// PodDevices), which the namespace quota check counts with the picks.
func fit(devs []Device, c Container, pod Pod, gpuPolicy string, allocated [][]Alloc) ([]Alloc, map[string]int) {
	reasons := map[string]int{}
	mutex := policyContains(gpuPolicy, "mutex") // util.PolicyContains
	bind := numaBind(pod)                       // assertNuma
	need := c.Nums
	prevNUMA := -1
	var picks []Alloc
	for i := len(devs) - 1; i >= 0; i-- {
		d := &devs[i]
		switch {
		case !d.Health:
			reasons[CardNotHealth]++
			continue
		case d.Cordoned:
			reasons[CardCordoned]++
			continue
		case !typeAllowed(pod.Annotations, d):
			reasons[CardTypeMismatch]++
			continue
		}
		// numa-bind: a device on another NUMA node than the previous one
		// starts the selection over. NVIDIA's Fit adds
		// len(tmpDevs[k.Type]), the devices picked so far
		// (pkg/device/nvidia/device.go:746-748@v2.10.0).
		if bind && prevNUMA != d.NUMA {
			if need != c.Nums {
				reasons[NumaNotFit] += len(picks)
			}
			need, prevNUMA, picks = c.Nums, d.NUMA, nil
		}
		if !uuidAllowed(pod.Annotations, d.ID) { // device.CheckUUID
			reasons[CardUUIDMismatch]++
			continue
		}
		if d.Count > d.Used && !(mutex && d.Used > 0) && c.Coresreq > 100 {
			c.Coresreq = 100 // device.go:772: clamped once past the slot and mutex checks
		}
		// fitQuota runs after the slot and mutex checks, before memory
		// (device.go:784@v2.10.0).
		if pod.Quota != nil && d.Count > d.Used && !(mutex && d.Used > 0) &&
			!fitQuota(pod, allocated, picks, Alloc{UUID: d.ID, Mem: memoryOn(c, d), Cores: c.Coresreq}) {
			reasons[ResourceQuotaNotFit]++
			continue
		}
		if r := Check(d, memoryOn(c, d), c.Coresreq, mutex); r != "" {
			reasons[r]++
			continue
		}
		if need > 0 {
			need--
			picks = append(picks, Alloc{UUID: d.ID, Mem: memoryOn(c, d), Cores: c.Coresreq})
		}
		if need == 0 {
			return picks, nil
		}
	}
	if len(picks) > 0 {
		reasons[AllocatedCardsInsufficientRequest] = len(picks)
	}
	return nil, reasons
}

// Check applies Fit's checks against one device's usage, in Fit's order:
// the slot limit, the mutex filter, memory, cores, the exclusive-card rule
// (100 cores on a 100-core card needs it unused) and the saturated-card
// rule (a 0-core task cannot join a card whose cores are all allocated).
// It returns the reason or "".
func Check(d *Device, memreq, coresreq int32, mutex bool) string {
	switch {
	case d.Count <= d.Used:
		return CardTimeSlicingExhausted
	case mutex && d.Used > 0:
		return ExclusiveDeviceAllocateConflict
	case d.Totalmem-d.Usedmem < memreq:
		return CardInsufficientMemory
	case d.Totalcore-d.Usedcores < coresreq:
		return CardInsufficientCore
	case d.Totalcore == 100 && coresreq == 100 && d.Used > 0:
		return ExclusiveDeviceAllocateConflict
	case d.Totalcore != 0 && d.Usedcores == d.Totalcore && coresreq == 0:
		return CardComputeUnitsExhausted
	}
	return ""
}

// memoryOn resolves a request's memory on a device as Fit does: Memreq
// when set, else the percentage of the device's memory.
func memoryOn(c Container, d *Device) int32 {
	if c.Memreq > 0 {
		return c.Memreq
	}
	if c.MemPercentagereq != 101 {
		return d.Totalmem * c.MemPercentagereq / 100
	}
	return 0
}

func policyContains(policy, name string) bool {
	for p := range strings.SplitSeq(policy, ",") {
		if strings.TrimSpace(p) == name {
			return true
		}
	}
	return false
}

// list splits a comma annotation, trimming entries and dropping empty ones
// (an empty value means no constraint since v2.10).
func list(annos map[string]string, key string) []string {
	var out []string
	for e := range strings.SplitSeq(annos[key], ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}

// typeAllowed is nvidia checkType: use-gputype and nouse-gputype as
// case-insensitive substrings of the model, vgpu-mode containing the
// device's mode.
func typeAllowed(annos map[string]string, d *Device) bool {
	t := strings.ToUpper(d.Type)
	if use := list(annos, AnnoUseType); len(use) > 0 {
		ok := false
		for _, u := range use {
			ok = ok || strings.Contains(t, strings.ToUpper(u))
		}
		if !ok {
			return false
		}
	}
	for _, u := range list(annos, AnnoNoUseType) {
		if strings.Contains(t, strings.ToUpper(u)) {
			return false
		}
	}
	if mode, ok := annos[AnnoMode]; ok && !strings.Contains(mode, d.Mode) {
		return false
	}
	return true
}

// uuidAllowed is device.CheckUUID: exact UUIDs.
func uuidAllowed(annos map[string]string, id string) bool {
	if use := list(annos, AnnoUseUUID); len(use) > 0 && !contains(use, id) {
		return false
	}
	return !contains(list(annos, AnnoNoUseUUID), id)
}

// Admit says whether committing allocation (one device list per
// container, init containers first) on node keeps every per-device rule
// Fit applies, checked container by container against the usage the
// earlier ones leave (init containers each against the node as it is, as
// scoreNode fits them): the health and cordon checks, then Check. It
// returns "" or the first reason.
func Admit(n Node, alloc [][]Alloc, initCount int, mutex bool) string {
	app := cloneDevices(n.Devices)
	for ci, ctr := range alloc {
		work := app
		if ci < initCount {
			work = cloneDevices(n.Devices)
		}
		seen := map[string]bool{}
		for _, a := range ctr {
			if seen[a.UUID] {
				return DuplicateDevice
			}
			seen[a.UUID] = true
			d := find(work, a.UUID)
			switch {
			case d == nil:
				return "UnknownDevice"
			case !d.Health:
				return CardNotHealth
			case d.Cordoned:
				return CardCordoned
			}
			if r := Check(d, a.Mem, a.Cores, mutex); r != "" {
				return r
			}
		}
		for _, a := range ctr {
			d := find(work, a.UUID)
			d.Used++
			d.Usedmem += a.Mem
			d.Usedcores += a.Cores
		}
	}
	return ""
}

func find(devs []Device, id string) *Device {
	for i := range devs {
		if devs[i].ID == id {
			return &devs[i]
		}
	}
	return nil
}

// Held is a counted pod: its node and its decoded allocation entries,
// which HAMi reads by position: the first InitCount are init containers'
// (CollapseInitContainerUsage, pkg/device/initContainer.go:36@v2.10.0),
// whether or not a GPU-less container left a placeholder. InitReleased
// drops them (AppContainersOnlyDeviceUsage, after onUpdatePod saw every
// init container succeed).
type Held struct {
	Node         string
	InitCount    int
	InitReleased bool
	Containers   [][]Alloc
}

// Recount rebuilds every device's usage from the held pods, as the
// scheduler's getNodesUsage does: each device entry adds a slot, its
// memory and its cores; with collapse (v2.10's
// CollapseInitContainerUsage, init containers not yet finished), per pod
// and device the larger of the biggest init entry and the sum of the app
// entries, slots being the number of app entries or 1 for init-only use.
// Entries naming unknown devices are ignored.
func Recount(nodes []Node, held []Held, collapse bool) {
	for ni := range nodes {
		for di := range nodes[ni].Devices {
			d := &nodes[ni].Devices[di]
			d.Used, d.Usedmem, d.Usedcores = 0, 0, 0
		}
	}
	for _, h := range held {
		var n *Node
		for ni := range nodes {
			if nodes[ni].Name == h.Node {
				n = &nodes[ni]
			}
		}
		if n == nil {
			continue
		}
		type use struct{ slots, mem, cores int32 }
		app, init := map[string]use{}, map[string]use{}
		var order []string
		for ci, ctr := range h.Containers {
			for _, a := range ctr {
				if !contains(order, a.UUID) {
					order = append(order, a.UUID)
				}
				if collapse && ci < h.InitCount && h.InitReleased {
					continue
				}
				if collapse && ci < h.InitCount {
					u := init[a.UUID]
					init[a.UUID] = use{1, max(u.mem, a.Mem), max(u.cores, a.Cores)}
					continue
				}
				u := app[a.UUID]
				app[a.UUID] = use{u.slots + 1, u.mem + a.Mem, u.cores + a.Cores}
			}
		}
		for _, id := range order {
			a, i := app[id], init[id]
			d := find(n.Devices, id)
			if d == nil {
				continue
			}
			d.Used += max(a.slots, i.slots)
			d.Usedmem += max(a.mem, i.mem)
			d.Usedcores += max(a.cores, i.cores)
		}
	}
}
