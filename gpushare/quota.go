package gpushare

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Namespace quotas as HAMi v2.10.0's QuotaManager keeps them
// (pkg/device/quota.go): per namespace and resource name, a Limit, a
// LimitSet flag and the Used the namespace's counted pods hold.
//
//   - Only spec.hard keys "limits.<memory name>" and "limits.<cores name>"
//     whose value is an integer (Quantity.AsInt64) are read
//     (addQuotaLocked, managedQuotaName); requests.* keys are ignored.
//   - A key a ResourceQuota sets is LimitSet, an explicit 0 included, and
//     then blocks; a resource no quota sets does not (FitQuota gates on
//     LimitSet).
//   - Every namespace has one entry per resource, whatever the number of
//     ResourceQuota objects: the last quota applied sets it, and deleting
//     any quota that names the key unsets it (delQuotaLocked). An update
//     removes the old object's keys and adds the new one's (UpdateQuota).
//   - Used is what AddUsage, RmUsage and ReplaceUsage leave: the sum over
//     the namespace's counted pods of their per-GPU usage as the ledger
//     counts it (memory in MiB after memoryFactor, cores in percent).
//   - FitQuota compares Used plus the pod's usage with the limit, the
//     memory limit multiplied by memoryFactor when that is over 1.

// quotaLimit is one QuotaManager entry's Limit and LimitSet.
type quotaLimit struct {
	limit int64
	set   bool
}

// nsQuota is what QuotaManager keeps for one namespace and the NVIDIA
// memory and cores names.
type nsQuota struct{ mem, cores quotaLimit }

// quotaSpec is the part of one ResourceQuota's spec.hard HAMi manages.
type quotaSpec struct {
	mem, cores       int64
	hasMem, hasCores bool
}

// QuotaLimit is one namespace's quota entry for one resource, as HAMi's
// QuotaManager holds it.
type QuotaLimit struct {
	// Resource is the ResourceQuota key, e.g. "limits.nvidia.com/gpumem".
	Resource string
	// Limit is the value a ResourceQuota set (MiB before memoryFactor for
	// memory, percent for cores); Set says one did. An unset limit does
	// not block; a set 0 does.
	Limit int64
	Set   bool
	// Used is what the namespace's counted pods hold (MiB after
	// memoryFactor, or cores).
	Used int64
}

// NamespaceQuota is a namespace's quota on GPU memory and cores.
type NamespaceQuota struct {
	// Namespace is the namespace's name.
	Namespace string
	// Memory and Cores are the entries for the memory and cores names.
	Memory, Cores QuotaLimit
}

// QuotaExceeded names a quota a pod would exceed: HAMi's
// ResourceQuotaNotFit with its numbers.
type QuotaExceeded struct {
	// Namespace is the pod's namespace.
	Namespace string
	// Resource is the ResourceQuota key, e.g. "limits.nvidia.com/gpumem".
	Resource string
	// Limit is the quota's limit in the unit compared: for memory, the
	// value set times memoryFactor (when over 1), in MiB.
	Limit int64
	// Used is what the namespace holds already; Asked is what the pod
	// would hold with the GPU considered.
	Used, Asked int64
}

// String reads "namespace team-a: limits.nvidia.com/gpumem 8000 used + 4000
// asked > 10000 limit".
func (q *QuotaExceeded) String() string {
	return fmt.Sprintf("namespace %s: %s %d used + %d asked > %d limit", q.Namespace, q.Resource, q.Used, q.Asked, q.Limit)
}

// SetResourceQuota applies a ResourceQuota as HAMi's scheduler does: the
// first time as QuotaManager.AddQuota, after that as UpdateQuota (the keys
// of the version seen before are unset, then the new ones set).
func (l *Ledger) SetResourceQuota(q *corev1.ResourceQuota) {
	l.mu.Lock()
	defer l.mu.Unlock()
	key := podKey{q.Namespace, q.Name}
	if old, ok := l.quotaObjs[key]; ok {
		l.unsetQuotaLocked(q.Namespace, old)
	}
	spec := l.parseQuota(q)
	l.quotaObjs[key] = spec
	nq := l.quotas[q.Namespace]
	if nq == nil {
		nq = &nsQuota{}
		l.quotas[q.Namespace] = nq
	}
	if spec.hasMem {
		nq.mem = quotaLimit{spec.mem, true}
	}
	if spec.hasCores {
		nq.cores = quotaLimit{spec.cores, true}
	}
}

// DeleteResourceQuota removes a ResourceQuota as QuotaManager.DelQuota
// does: the keys it set are unset in its namespace, even where another
// quota of the namespace sets them too.
func (l *Ledger) DeleteResourceQuota(namespace, name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	key := podKey{namespace, name}
	if old, ok := l.quotaObjs[key]; ok {
		l.unsetQuotaLocked(namespace, old)
		delete(l.quotaObjs, key)
	}
}

// Quota returns the namespace's quota entries and usage.
func (l *Ledger) Quota(namespace string) NamespaceQuota {
	l.mu.RLock()
	defer l.mu.RUnlock()
	out := NamespaceQuota{Namespace: namespace,
		Memory: QuotaLimit{Resource: quotaPrefix + l.cfg.Resources.Memory},
		Cores:  QuotaLimit{Resource: quotaPrefix + l.cfg.Resources.Cores}}
	if nq := l.quotas[namespace]; nq != nil {
		out.Memory.Limit, out.Memory.Set = nq.mem.limit, nq.mem.set
		out.Cores.Limit, out.Cores.Set = nq.cores.limit, nq.cores.set
	}
	used := l.nsUsed[namespace]
	out.Memory.Used, out.Cores.Used = used.MemoryMiB, used.Cores
	return out
}

const quotaPrefix = "limits."

// parseQuota reads the keys addQuotaLocked takes: a "limits." prefix on a
// managed name and a value AsInt64 accepts.
func (l *Ledger) parseQuota(q *corev1.ResourceQuota) quotaSpec {
	var s quotaSpec
	for name, v := range q.Spec.Hard {
		rest, ok := strings.CutPrefix(string(name), quotaPrefix)
		if !ok {
			continue
		}
		value, ok := v.AsInt64()
		if !ok {
			continue
		}
		switch rest {
		case l.cfg.Resources.Memory:
			s.mem, s.hasMem = value, true
		case l.cfg.Resources.Cores:
			s.cores, s.hasCores = value, true
		}
	}
	return s
}

// unsetQuotaLocked is delQuotaLocked: Limit 0, LimitSet false.
func (l *Ledger) unsetQuotaLocked(namespace string, s quotaSpec) {
	nq := l.quotas[namespace]
	if nq == nil {
		return
	}
	if s.hasMem {
		nq.mem = quotaLimit{}
	}
	if s.hasCores {
		nq.cores = quotaLimit{}
	}
}

// countUsageLocked adds (sign 1) or removes (sign -1) a pod's usage from
// its namespace's Used (AddUsage, RmUsage; countPodDevices sums every
// entry's memory and cores).
func (l *Ledger) countUsageLocked(p *podState, sign int64) {
	var sum Amount
	for _, c := range p.contrib {
		sum = sum.Add(c.used)
	}
	if sum == (Amount{}) && sign > 0 {
		return
	}
	u := l.nsUsed[p.namespace]
	u.MemoryMiB += sign * sum.MemoryMiB
	u.Cores += sign * sum.Cores
	if u.MemoryMiB == 0 && u.Cores == 0 {
		delete(l.nsUsed, p.namespace)
		return
	}
	l.nsUsed[p.namespace] = u
}

// quotaCheck is a namespace's quota as Fit and Allocate check it.
type quotaCheck struct {
	ns                 string
	q                  nsQuota
	used               Amount
	factor             int64
	memName, coresName string
}

// quotaCheckLocked returns the check for a namespace, nil when no limit is
// set there (FitQuota then always passes).
func (l *Ledger) quotaCheckLocked(namespace string) *quotaCheck {
	nq := l.quotas[namespace]
	if nq == nil || (!nq.mem.set && !nq.cores.set) {
		return nil
	}
	return &quotaCheck{ns: namespace, q: *nq, used: l.nsUsed[namespace], factor: int64(l.cfg.MemoryFactor),
		memName: quotaPrefix + l.cfg.Resources.Memory, coresName: quotaPrefix + l.cfg.Resources.Cores}
}

// exceeds is FitQuota for a pod that would hold mem and cores: memory
// first, then cores; nil when both fit.
func (c *quotaCheck) exceeds(mem, cores int64) *QuotaExceeded {
	if c.q.mem.set {
		limit := c.q.mem.limit
		if c.factor > 1 {
			limit *= c.factor
		}
		if c.used.MemoryMiB+mem > limit {
			return &QuotaExceeded{Namespace: c.ns, Resource: c.memName, Limit: limit, Used: c.used.MemoryMiB, Asked: mem}
		}
	}
	if c.q.cores.set && c.used.Cores+cores > c.q.cores.limit {
		return &QuotaExceeded{Namespace: c.ns, Resource: c.coresName, Limit: c.q.cores.limit, Used: c.used.Cores, Asked: cores}
	}
	return nil
}
