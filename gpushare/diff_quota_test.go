package gpushare_test

import (
	"fmt"
	"math/rand/v2"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cozystack/tenantkit/gpushare/internal/hamiref"
)

// Quota classes the random differential test draws for the pods'
// namespace: none, set (memory, cores or both), an explicit zero, unset
// (a quota naming no key HAMi manages) and updated (set, then replaced
// part way through the pods).
const (
	quotaNone = iota
	quotaSet
	quotaZero
	quotaUnset
	quotaUpdated
	quotaClasses
)

// randomHard draws a quota's spec.hard for a class, values as
// Quantity.AsInt64 reads them.
func randomHard(rng *rand.Rand, class int) map[string]int64 {
	h := map[string]int64{}
	switch class {
	case quotaSet, quotaUpdated:
		if rng.IntN(3) != 0 {
			h[memKey] = rng.Int64N(300000)
		}
		if rng.IntN(2) == 0 {
			h[coresKey] = rng.Int64N(400)
		}
	case quotaZero:
		h[[]string{memKey, coresKey}[rng.IntN(2)]] = 0
	case quotaUnset:
		h["requests.nvidia.com/gpumem"] = rng.Int64N(1000)
		h["limits.nvidia.com/gpumem-percentage"] = 10
	}
	return h
}

func quotaObject(ns, name string, hard map[string]int64) *corev1.ResourceQuota {
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{}}}
	for k, v := range hard {
		q.Spec.Hard[corev1.ResourceName(k)] = *resource.NewQuantity(v, resource.DecimalSI)
	}
	return q
}

// setQuota applies a quota to both sides: the ledger's SetResourceQuota,
// hamiref's AddQuota or UpdateQuota as HAMi's informer handlers call them.
func (w *world) setQuota(ns, name string, hard map[string]int64) {
	if w.ref == nil {
		w.ref = hamiref.NewQuotaManager(w.cfg.MemoryFactor)
		w.hard = map[string]map[string]int64{}
	}
	key := ns + "/" + name
	if old, ok := w.hard[key]; ok {
		w.ref.UpdateQuota(ns, old, hard)
	} else {
		w.ref.AddQuota(ns, hard)
	}
	w.hard[key] = hard
	w.ledger.SetResourceQuota(quotaObject(ns, name, hard))
}

// drawQuota gives the pods' namespace a quota of a class drawn by rng and
// returns the class.
func (w *world) drawQuota(rng *rand.Rand) int {
	class := rng.IntN(quotaClasses)
	if class != quotaNone {
		w.setQuota("new", "gpu", randomHard(rng, class))
	}
	return class
}

// usageKey names a held pod's usage in hamiref's QuotaManager.
func usageKey(ns, name string) string { return fmt.Sprintf("%s/%s", ns, name) }
