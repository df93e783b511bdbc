package gpushare_test

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/cozystack/tenantkit/gpushare"
	"github.com/cozystack/tenantkit/gpushare/internal/hamiref"
)

// FuzzNewPodRequest: any quantities for the four resources, in limits or
// requests, with the webhook or without. NewPodRequest never fails on
// resources by default, derives exactly what hamiref (HAMi's webhook and
// GenerateResourceRequests) derives, keeps every field in range, and
// StrictRequests refuses exactly the pods it warns about.
func FuzzNewPodRequest(f *testing.F) {
	f.Add("1", "3000", "", "30", false, false)
	f.Add("1", "", "150", "", false, false)
	f.Add("0", "", "101", "", false, true)
	f.Add("2", "2147483648", "", "150", true, false)
	f.Add("500m", "1.5", "-3", "4294967396", false, false)
	f.Add("", "1k", "0", "", true, true)
	f.Fuzz(func(t *testing.T, gpu, mem, pct, cores string, inRequests, skip bool) {
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
		pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{c}}}
		got, err := gpushare.NewPodRequest(pod, gpushare.Config{SkipWebhookDefaults: skip})
		if err != nil {
			t.Fatalf("default mode refused %v: %v", l, err)
		}
		r := got.Containers[0]
		if r.Count < 0 || r.MemoryMiB < 0 || r.MemoryPercent < 0 || r.MemoryPercent > 100 || r.Cores < 0 || r.Cores > 100 {
			t.Fatalf("out of range: %+v", r)
		}
		seen, admitted := pod, true
		cfg := hamiref.RequestConfig{DefaultGPUNum: 1, MemoryFactor: 1}
		if !skip {
			seen, admitted = hamiref.Webhook(pod, cfg)
		}
		if admitted {
			r.Name = ""
			if want := hamiRequest(hamiref.Requests(seen, cfg)[0]); r != want {
				t.Fatalf("%v: gpushare %+v, HAMi %+v", l, r, want)
			}
		}
		_, strict := gpushare.NewPodRequest(pod, gpushare.Config{SkipWebhookDefaults: skip, StrictRequests: true})
		if (strict != nil) != (len(got.Warnings) > 0) {
			t.Fatalf("strict %v, warnings %v", strict, fmt.Sprint(got.Warnings))
		}
	})
}
