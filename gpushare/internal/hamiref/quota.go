package hamiref

import (
	"sort"
	"strings"
)

// ResourceQuotaNotFit is HAMi's reason (pkg/device/common/common.go).
const ResourceQuotaNotFit = "ResourceQuotaNotFit"

// Quota is HAMi:pkg/device/quota.go Quota.
type Quota struct {
	Used     int64
	Limit    int64
	LimitSet bool
}

// QuotaManager is HAMi:pkg/device/quota.go QuotaManager for the NVIDIA
// device: MemName and CoreName are its ResourceMemoryName and
// ResourceCoreName (nvidia.com/gpumem, nvidia.com/gpucores).
type QuotaManager struct {
	Quotas            map[string]map[string]*Quota
	MemName, CoreName string
	MemoryFactor      int32
}

// NewQuotaManager returns an empty manager for HAMi's default names.
func NewQuotaManager(memoryFactor int32) *QuotaManager {
	return &QuotaManager{Quotas: map[string]map[string]*Quota{}, MemName: "nvidia.com/gpumem",
		CoreName: "nvidia.com/gpucores", MemoryFactor: memoryFactor}
}

// FitQuota is QuotaManager.FitQuota.
func (q *QuotaManager) FitQuota(ns string, memreq, coresreq int64) bool {
	dq := q.Quotas[ns]
	if dq == nil {
		return true
	}
	if memQuota, ok := dq[q.MemName]; ok {
		limit := memQuota.Limit
		if q.MemoryFactor > 1 {
			limit = limit * int64(q.MemoryFactor)
		}
		if memQuota.LimitSet && memQuota.Used+memreq > limit {
			return false
		}
	}
	coreQuota, ok := dq[q.CoreName]
	if ok && coreQuota.LimitSet && coreQuota.Used+coresreq > coreQuota.Limit {
		return false
	}
	return true
}

// countPodDevices is quota.go countPodDevices for NVIDIA entries.
func (q *QuotaManager) countPodDevices(pd [][]Alloc) map[string]int64 {
	res := map[string]int64{}
	for _, ctr := range pd {
		for _, a := range ctr {
			res[q.MemName] += int64(a.Mem)
			res[q.CoreName] += int64(a.Cores)
		}
	}
	return res
}

// AddUsage is QuotaManager.AddUsage (addUsageLocked).
func (q *QuotaManager) AddUsage(ns string, pd [][]Alloc) {
	usage := q.countPodDevices(pd)
	if len(usage) == 0 {
		return
	}
	if q.Quotas[ns] == nil {
		q.Quotas[ns] = map[string]*Quota{}
	}
	dp := q.Quotas[ns]
	for idx, val := range usage {
		if _, ok := dp[idx]; !ok {
			dp[idx] = &Quota{}
		}
		dp[idx].Used += val
	}
}

// RmUsage is QuotaManager.RmUsage (rmUsageLocked, clamping at 0).
func (q *QuotaManager) RmUsage(ns string, pd [][]Alloc) {
	usage := q.countPodDevices(pd)
	dp, ok := q.Quotas[ns]
	if len(usage) == 0 || !ok {
		return
	}
	for idx, val := range usage {
		if qi, ok := dp[idx]; ok && qi != nil {
			qi.Used -= val
			if qi.Used < 0 {
				qi.Used = 0
			}
		}
	}
}

// managed is managedQuotaName for the NVIDIA names.
func (q *QuotaManager) managed(key string) (string, bool) {
	if !strings.HasPrefix(key, "limits.") {
		return "", false
	}
	dn := strings.TrimPrefix(key, "limits.")
	return dn, dn == q.MemName || dn == q.CoreName
}

// AddQuota is addQuotaLocked; hard holds the spec.hard keys whose value
// Quantity.AsInt64 accepts.
func (q *QuotaManager) AddQuota(ns string, hard map[string]int64) {
	for idx, value := range hard {
		dn, ok := q.managed(idx)
		if !ok {
			continue
		}
		if q.Quotas[ns] == nil {
			q.Quotas[ns] = map[string]*Quota{}
		}
		dp := q.Quotas[ns]
		if _, ok := dp[dn]; !ok {
			dp[dn] = &Quota{Limit: value}
		}
		dp[dn].Limit = value
		dp[dn].LimitSet = true
	}
}

// DelQuota is delQuotaLocked.
func (q *QuotaManager) DelQuota(ns string, hard map[string]int64) {
	for idx := range hard {
		dn, ok := q.managed(idx)
		if !ok {
			continue
		}
		if dq, ok := q.Quotas[ns]; ok {
			if qi, ok := dq[dn]; ok {
				qi.Limit, qi.LimitSet = 0, false
			}
		}
	}
}

// UpdateQuota is UpdateQuota: the old object's keys removed, then the new
// one's added.
func (q *QuotaManager) UpdateQuota(ns string, old, hard map[string]int64) {
	q.DelQuota(ns, old)
	q.AddQuota(ns, hard)
}

// Collapse is CollapseInitContainerUsage
// (HAMi:pkg/device/initContainer.go@v2.10.0) for the NVIDIA entries: one
// container of per-device entries, sorted by UUID.
func Collapse(numInit int, raw [][]Alloc) [][]Alloc {
	type use struct{ mem, cores int32 }
	initPeak, appSum := map[string]use{}, map[string]use{}
	for cidx, ctr := range raw {
		for _, d := range ctr {
			if cidx < numInit {
				cur := initPeak[d.UUID]
				cur.mem, cur.cores = max(cur.mem, d.Mem), max(cur.cores, d.Cores)
				initPeak[d.UUID] = cur
			} else {
				cur := appSum[d.UUID]
				cur.mem, cur.cores = cur.mem+d.Mem, cur.cores+d.Cores
				appSum[d.UUID] = cur
			}
		}
	}
	var out []Alloc
	for _, m := range []map[string]use{initPeak, appSum} {
		for id := range m {
			if !containsAlloc(out, id) {
				i, a := initPeak[id], appSum[id]
				out = append(out, Alloc{UUID: id, Mem: max(i.mem, a.mem), Cores: max(i.cores, a.cores)})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].UUID < out[j].UUID })
	return [][]Alloc{out}
}

func containsAlloc(as []Alloc, id string) bool {
	for _, a := range as {
		if a.UUID == id {
			return true
		}
	}
	return false
}

// fitQuota is HAMi:pkg/device/nvidia/device.go fitQuota: the allocated
// containers of the phase, the container's picks so far and the
// candidate, collapsed and summed, against the namespace's quota.
func fitQuota(pod Pod, allocated [][]Alloc, picks []Alloc, cand Alloc) bool {
	hypo := append(append([][]Alloc{}, allocated...), append(append([]Alloc{}, picks...), cand))
	var mem, core int64
	for _, ctr := range Collapse(pod.NumInit, hypo) {
		for _, a := range ctr {
			mem += int64(a.Mem)
			core += int64(a.Cores)
		}
	}
	return pod.Quota.FitQuota(pod.Namespace, mem, core)
}
