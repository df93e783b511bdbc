package gpushare_test

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/cozystack/tenantkit/gpushare"
	"github.com/cozystack/tenantkit/gpushare/internal/hamiref"
)

// Values of the four resources: those the apiserver accepts for an
// extended resource (whole, non-negative), the odd ones HAMi bends among
// them, the int32 and int64 edges HAMi's conversions meet, and, drawn now
// and then, values only a pod that bypassed the apiserver's validation
// carries (negative, fractional), which HAMi's code still decides.
var (
	specGPUs  = []string{"0", "1", "1", "2", "3", "4294967297", "2147483648", "9223372036854775807"}
	specMem   = []string{"0", "1000", "3000", "20000", "2Gi", "2147483647", "2147483648", "1k"}
	specPct   = []string{"0", "10", "50", "100", "100", "101", "150", "1k"}
	specCores = []string{"0", "10", "30", "100", "101", "150", "2147483647", "2147483648", "4294967295", "4294967296", "4294967396", "9223372036854775807"}
	oddValues = []string{"-1", "-150", "-2147483649", "100.5", "99.5", "-0.5", "500m"}
)

// randomSpec draws a pod spec: 1–3 containers and sometimes init
// containers, each naming any of the four resources in its limits (and,
// now and then, the same values as requests), and now and then what HAMi's
// webhook decides on besides resources: a privileged container, a pod that
// names its node, another scheduler, the hami.io/webhook: ignore label, no
// app containers at all.
func randomSpec(rng *rand.Rand, name string) *corev1.Pod {
	pod := &corev1.Pod{}
	pod.Namespace, pod.Name = "spec", name
	draw := func(vals []string) string {
		if rng.IntN(10) == 0 {
			return oddValues[rng.IntN(len(oddValues))]
		}
		return vals[rng.IntN(len(vals))]
	}
	ctr := func(n string) corev1.Container {
		l := corev1.ResourceList{}
		for _, r := range []struct {
			name string
			vals []string
			p    int
		}{{hamiref.ResGPU, specGPUs, 3}, {hamiref.ResMem, specMem, 2}, {hamiref.ResMemPct, specPct, 4}, {hamiref.ResCores, specCores, 2}} {
			if rng.IntN(r.p) == 0 || (r.name == hamiref.ResGPU && rng.IntN(2) == 0) {
				l[corev1.ResourceName(r.name)] = resource.MustParse(draw(r.vals))
			}
		}
		c := corev1.Container{Name: n, Resources: corev1.ResourceRequirements{Limits: l}}
		if rng.IntN(4) == 0 {
			c.Resources.Requests = l.DeepCopy()
		}
		if rng.IntN(12) == 0 {
			c.SecurityContext = &corev1.SecurityContext{Privileged: new(rng.IntN(3) > 0)}
		}
		return c
	}
	for i := range rng.IntN(3) / 2 * (1 + rng.IntN(2)) {
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, ctr(fmt.Sprintf("init%d", i)))
	}
	if rng.IntN(15) > 0 {
		for i := range 1 + rng.IntN(3) {
			pod.Spec.Containers = append(pod.Spec.Containers, ctr(fmt.Sprintf("c%d", i)))
		}
	}
	if rng.IntN(12) == 0 {
		pod.Spec.NodeName = "gpu-1"
	}
	if rng.IntN(4) == 0 {
		pod.Spec.SchedulerName = []string{corev1.DefaultSchedulerName, "hami-scheduler", "volcano"}[rng.IntN(3)]
	}
	if rng.IntN(15) == 0 {
		pod.Labels = map[string]string{"hami.io/webhook": []string{"ignore", "on"}[rng.IntN(2)]}
	}
	return pod
}

// hamiRequest maps hamiref's ContainerDeviceRequest onto gpushare's
// fields: 101 is an unset percentage; cores as the Fit uses them (clamped
// to 100).
func hamiRequest(c hamiref.Container) gpushare.ContainerRequest {
	out := gpushare.ContainerRequest{Init: c.Init, Count: c.Nums, MemoryMiB: c.Memreq, Cores: min(c.Coresreq, 100)}
	if c.MemPercentagereq != 101 {
		out.MemoryPercent = c.MemPercentagereq
	}
	return out
}

// hamiDerives is what HAMi decides of pod, with its webhook in the path or
// not: refused by the webhook, counting negative cores (which gpushare
// refuses, see NewPodRequest), or the containers' requests.
type hamiDerives struct {
	refused, negativeCores bool
	containers             []gpushare.ContainerRequest
}

func hamiDerive(pod *corev1.Pod, webhook bool) hamiDerives {
	cfg := hamiref.RequestConfig{DefaultGPUNum: 1, MemoryFactor: 1}
	seen := pod
	if webhook {
		p, admitted := hamiref.Webhook(pod, cfg)
		if !admitted {
			return hamiDerives{refused: true}
		}
		seen = p
	}
	var out hamiDerives
	for _, c := range hamiref.Requests(seen, cfg) {
		out.negativeCores = out.negativeCores || c.Nums > 0 && c.Coresreq < 0
		out.containers = append(out.containers, hamiRequest(c))
	}
	return out
}

// compareRequest derives pod's request with NewPodRequest and says how it
// differs from HAMi's decision, "" when it agrees: a pod the webhook
// refuses is a *WebhookError; one whose cores HAMi counts negative a
// *RequestError naming gpucores; any other the containers' requests, with
// StrictRequests refusing exactly the pods with warnings. It returns the
// class of HAMi's decision too.
func compareRequest(pod *corev1.Pod, skip bool) (class, diff string) {
	want := hamiDerive(pod, !skip)
	got, err := gpushare.NewPodRequest(pod, gpushare.Config{SkipWebhook: skip})
	var re *gpushare.RequestError
	switch {
	case want.refused:
		class = "refused by the webhook"
		var we *gpushare.WebhookError
		if !errors.As(err, &we) || !errors.Is(err, gpushare.ErrWebhookRefused) {
			return class, fmt.Sprintf("HAMi's webhook refuses, gpushare: %v", err)
		}
	case want.negativeCores:
		class = "negative cores"
		if !errors.As(err, &re) || re.Resource != gpushare.ResourceCores {
			return class, fmt.Sprintf("HAMi counts negative cores, gpushare: %v", err)
		}
	case err != nil:
		return "admitted", fmt.Sprintf("HAMi admits %v, gpushare refuses: %v", want.containers, err)
	default:
		class = "admitted"
		var have []gpushare.ContainerRequest
		for _, c := range got.Containers {
			c.Name = ""
			have = append(have, c)
		}
		if fmt.Sprint(have) != fmt.Sprint(want.containers) {
			return class, fmt.Sprintf("gpushare %v, HAMi %v", have, want.containers)
		}
		_, strictErr := gpushare.NewPodRequest(pod, gpushare.Config{SkipWebhook: skip, StrictRequests: true})
		if (strictErr != nil) != (len(got.Warnings) > 0) {
			return class, fmt.Sprintf("StrictRequests %v, warnings %v", strictErr, got.Warnings)
		}
	}
	return class, ""
}

// TestDifferentialRequests derives the requests of random pod specs with
// NewPodRequest and with hamiref (HAMi's webhook, then
// GenerateResourceRequests), with and without the webhook, and requires
// them to agree on every pod: the webhook's refusals, negative cores, the
// containers' requests.
func TestDifferentialRequests(t *testing.T) {
	cases, agree := 0, 0
	classes := map[string]int{}
	var diffs []string
	base := diffSeed(t)
	for seed := base; seed < base+1500; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 78))
		pod := randomSpec(rng, fmt.Sprintf("s%d", seed))
		for _, skip := range []bool{false, true} {
			cases++
			class, diff := compareRequest(pod, skip)
			classes[fmt.Sprintf("%s (webhook %v)", class, !skip)]++
			if diff == "" {
				agree++
			} else if len(diffs) < 5 {
				diffs = append(diffs, fmt.Sprintf("%s webhook %v: %s", pod.Name, !skip, diff))
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(classes)) {
		t.Logf("  %s: %d", k, classes[k])
	}
	t.Logf("requests: %d/%d derivations agree %v", agree, cases, diffs)
	require.Equal(t, cases, agree, "%v", diffs)
	for _, class := range []string{"refused by the webhook (webhook true)", "negative cores (webhook true)", "negative cores (webhook false)", "admitted (webhook true)", "admitted (webhook false)"} {
		require.NotZero(t, classes[class], "the generator never drew a pod of class %q", class)
	}
}
