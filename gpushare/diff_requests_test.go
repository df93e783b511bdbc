package gpushare_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/cozystack/tenantkit/gpushare"
	"github.com/cozystack/tenantkit/gpushare/internal/hamiref"
)

// Values the apiserver accepts for an extended resource (whole,
// non-negative), the odd ones HAMi bends among them.
var (
	specGPUs  = []string{"0", "1", "1", "2", "3", "4294967297", "2147483648"}
	specMem   = []string{"0", "1000", "3000", "20000", "2Gi", "2147483648", "1k"}
	specPct   = []string{"0", "10", "50", "100", "101", "150", "1k"}
	specCores = []string{"0", "10", "30", "100", "101", "150", "4294967396"}
)

// randomSpec draws a pod spec the apiserver accepts: 1–3 containers and
// sometimes init containers, each naming any of the four resources in its
// limits (and, now and then, the same values as requests).
func randomSpec(rng *rand.Rand, name string) *corev1.Pod {
	pod := &corev1.Pod{}
	pod.Namespace, pod.Name = "spec", name
	ctr := func(n string) corev1.Container {
		l := corev1.ResourceList{}
		for _, r := range []struct {
			name string
			vals []string
			p    int
		}{{hamiref.ResGPU, specGPUs, 3}, {hamiref.ResMem, specMem, 2}, {hamiref.ResMemPct, specPct, 4}, {hamiref.ResCores, specCores, 2}} {
			if rng.IntN(r.p) == 0 || (r.name == hamiref.ResGPU && rng.IntN(2) == 0) {
				l[corev1.ResourceName(r.name)] = resource.MustParse(r.vals[rng.IntN(len(r.vals))])
			}
		}
		c := corev1.Container{Name: n, Resources: corev1.ResourceRequirements{Limits: l}}
		if rng.IntN(4) == 0 {
			c.Resources.Requests = l.DeepCopy()
		}
		return c
	}
	for i := range rng.IntN(3) / 2 * (1 + rng.IntN(2)) {
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, ctr(fmt.Sprintf("init%d", i)))
	}
	for i := range 1 + rng.IntN(3) {
		pod.Spec.Containers = append(pod.Spec.Containers, ctr(fmt.Sprintf("c%d", i)))
	}
	return pod
}

// hamiRequest maps hamiref's ContainerDeviceRequest onto gpushare's
// fields: 101 is an unset percentage; cores as the Fit uses them (clamped
// to 100); cores HAMi's int32 conversion makes negative are gpushare's 0,
// its one deliberate difference here.
func hamiRequest(c hamiref.Container) gpushare.ContainerRequest {
	out := gpushare.ContainerRequest{Init: c.Init, Count: c.Nums, MemoryMiB: c.Memreq, Cores: min(max(c.Coresreq, 0), 100)}
	if c.MemPercentagereq != 101 {
		out.MemoryPercent = c.MemPercentagereq
	}
	return out
}

// TestDifferentialRequests derives the requests of random pod specs the
// apiserver accepts, plus the odd ones, with NewPodRequest and with
// hamiref (HAMi's webhook, then GenerateResourceRequests), with and without
// the webhook, and compares the containers' requests, the webhook's
// refusals, and StrictRequests refusing exactly the pods with warnings.
func TestDifferentialRequests(t *testing.T) {
	cases, agree, refusals := 0, 0, 0
	var diffs []string
	base := diffSeed(t)
	for seed := base; seed < base+600; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 78))
		pod := randomSpec(rng, fmt.Sprintf("s%d", seed))
		for _, skip := range []bool{false, true} {
			cases++
			cfg := gpushare.Config{SkipWebhookDefaults: skip}
			got, err := gpushare.NewPodRequest(pod, cfg)
			require.NoError(t, err)
			seen, admitted := pod, true
			if !skip {
				seen, admitted = hamiref.Webhook(pod, hamiref.RequestConfig{DefaultGPUNum: 1, MemoryFactor: 1})
			}
			refused := false
			for _, w := range got.Warnings {
				refused = refused || strings.Contains(w.Reason, "webhook refuses")
			}
			ok := refused == !admitted
			if admitted {
				var want []gpushare.ContainerRequest
				for _, c := range hamiref.Requests(seen, hamiref.RequestConfig{DefaultGPUNum: 1, MemoryFactor: 1}) {
					want = append(want, hamiRequest(c))
				}
				var have []gpushare.ContainerRequest
				for _, c := range got.Containers {
					c.Name = ""
					have = append(have, c)
				}
				ok = ok && fmt.Sprint(have) == fmt.Sprint(want)
				if !ok && len(diffs) < 5 {
					diffs = append(diffs, fmt.Sprintf("%s webhook %v: gpushare %v, HAMi %v", pod.Name, !skip, have, want))
				}
			} else {
				refusals++
			}
			_, strictErr := gpushare.NewPodRequest(pod, gpushare.Config{SkipWebhookDefaults: skip, StrictRequests: true})
			ok = ok && (strictErr != nil) == (len(got.Warnings) > 0)
			if ok {
				agree++
			}
		}
	}
	t.Logf("requests: %d/%d derivations agree (%d refused by the webhook) %v", agree, cases, refusals, diffs)
	require.Equal(t, cases, agree, "%v", diffs)
}
