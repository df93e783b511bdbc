package gpushare_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/cozystack/tenantkit/gpushare"
	"github.com/cozystack/tenantkit/gpushare/internal/hamiref"
)

// FuzzNewPodRequest: any quantities for the four resources, in limits or
// requests, in a privileged container or not, with the webhook or without.
// NewPodRequest decides exactly as hamiref (HAMi's webhook and
// GenerateResourceRequests) does — refused by the webhook, refused for
// negative cores, or the same request — keeps every field in range, and
// StrictRequests refuses exactly the pods it warns about.
func FuzzNewPodRequest(f *testing.F) {
	f.Add("1", "3000", "", "30", false, false, false)
	f.Add("1", "", "150", "", false, false, false)
	f.Add("0", "", "101", "", false, true, false)
	f.Add("2", "2147483648", "", "150", true, false, false)
	f.Add("500m", "1.5", "-3", "4294967396", false, false, false)
	f.Add("", "1k", "0", "", true, true, false)
	f.Add("1", "", "", "-1", false, false, false)
	f.Add("1", "", "", "4294967295", false, true, false)
	f.Add("1", "", "", "", false, false, true)
	f.Fuzz(func(t *testing.T, gpu, mem, pct, cores string, inRequests, skip, privileged bool) {
		l := corev1.ResourceList{}
		for name, v := range map[string]string{hamiref.ResGPU: gpu, hamiref.ResMem: mem, hamiref.ResMemPct: pct, hamiref.ResCores: cores} {
			if v == "" {
				continue
			}
			q, err := resource.ParseQuantity(v)
			if err != nil {
				return
			}
			l[corev1.ResourceName(name)] = q
		}
		c := corev1.Container{Name: "c", Resources: corev1.ResourceRequirements{Limits: l}}
		if inRequests {
			c.Resources = corev1.ResourceRequirements{Requests: l}
		}
		if privileged {
			c.SecurityContext = &corev1.SecurityContext{Privileged: &privileged}
		}
		pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{c}}}
		if _, diff := compareRequest(pod, skip); diff != "" {
			t.Fatalf("%v: %s", l, diff)
		}
		got, err := gpushare.NewPodRequest(pod, gpushare.Config{SkipWebhook: skip})
		if err != nil {
			return
		}
		r := got.Containers[0]
		if r.Count < 0 || r.MemoryMiB < 0 || r.MemoryPercent < 0 || r.MemoryPercent > 100 || r.Cores < 0 || r.Cores > 100 {
			t.Fatalf("out of range: %+v", r)
		}
	})
}
