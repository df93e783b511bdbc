package hamiref

import (
	"math"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Resource names of HAMi's chart defaults.
const (
	ResGPU    = "nvidia.com/gpu"
	ResMem    = "nvidia.com/gpumem"
	ResMemPct = "nvidia.com/gpumem-percentage"
	ResCores  = "nvidia.com/gpucores"
)

// RequestConfig holds the scheduler's NVIDIA settings requests read
// (nvidia.NvidiaConfig): DefaultMemory, DefaultCores, DefaultGPUNum and
// MemoryFactor, HAMi's chart values.
type RequestConfig struct {
	DefaultMemory, DefaultCores, DefaultGPUNum, MemoryFactor int32
}

func limit(c *corev1.Container, name string) (resource.Quantity, bool) {
	q, ok := c.Resources.Limits[corev1.ResourceName(name)]
	return q, ok
}

func limitOrRequest(c *corev1.Container, name string) (resource.Quantity, bool) {
	if q, ok := c.Resources.Limits[corev1.ResourceName(name)]; ok {
		return q, true
	}
	q, ok := c.Resources.Requests[corev1.ResourceName(name)]
	return q, ok
}

// Webhook is HAMi's admission webhook on pod (the chart's objectSelector,
// then Handle in pkg/scheduler/webhook.go:53-120 with MutateAdmission for
// every container, init containers first, pkg/device/nvidia/device.go:
// 347-450@v2.10.0, the chart's schedulerName hami-scheduler and
// forceOverwriteDefaultScheduler true), on a copy. It returns the pod as
// admitted (mutated when the webhook handles it), or false when the
// webhook refuses it: no containers, validateMemoryPercentage (a
// percentage whose Quantity.Value() is outside 0–100, whatever the
// container's GPUs), a privileged container or spec.nodeName in a pod with
// a GPU resource. The ResourceQuota check is left out (no quota here).
func Webhook(pod *corev1.Pod, cfg RequestConfig) (*corev1.Pod, bool) {
	p := pod.DeepCopy()
	if p.Labels["hami.io/webhook"] == "ignore" {
		return p, true // the objectSelector: the webhook is not called
	}
	if len(p.Spec.Containers) == 0 {
		return nil, false
	}
	if s := p.Spec.SchedulerName; s != "" && s != corev1.DefaultSchedulerName && s != "hami-scheduler" {
		return p, true // "pod already has different scheduler assigned"
	}
	hasResource := false
	for _, list := range [][]corev1.Container{p.Spec.InitContainers, p.Spec.Containers} {
		for i := range list {
			found, ok := mutate(&list[i], cfg)
			if !ok {
				return nil, false
			}
			hasResource = hasResource || found
		}
	}
	if !hasResource {
		return p, true
	}
	for _, list := range [][]corev1.Container{p.Spec.InitContainers, p.Spec.Containers} {
		for _, c := range list {
			if c.SecurityContext != nil && c.SecurityContext.Privileged != nil && *c.SecurityContext.Privileged {
				return nil, false
			}
		}
	}
	if p.Spec.NodeName != "" {
		return nil, false
	}
	p.Spec.SchedulerName = "hami-scheduler"
	return p, true
}

// mutate is MutateAdmission on one container: false when it refuses the
// container, else whether the container has a GPU resource.
func mutate(c *corev1.Container, cfg RequestConfig) (found, ok bool) {
	if q, ok := limitOrRequest(c, ResMemPct); ok && (q.Value() < 0 || q.Value() > 100) {
		return false, false
	}
	// mutateContainerResource: limits only.
	_, hasCount := limit(c, ResGPU)
	_, hasCores := limit(c, ResCores)
	_, hasMem := limit(c, ResMem)
	_, hasPct := limit(c, ResMemPct)
	found = hasCount
	if !hasCount && (hasCores || hasMem || hasPct) && cfg.DefaultGPUNum > 0 {
		c.Resources.Limits[ResGPU] = *resource.NewQuantity(int64(cfg.DefaultGPUNum), resource.BinarySI)
		found = true
	}
	// defaultExclusiveCoreIfNeeded: limits, then requests.
	if _, ok := limitOrRequest(c, ResGPU); !ok {
		return found, true
	}
	if _, ok := limitOrRequest(c, ResCores); ok {
		return found, true
	}
	exclusive := false
	if q, ok := limitOrRequest(c, ResMemPct); ok {
		exclusive = q.Value() == 100
	} else if _, ok := limitOrRequest(c, ResMem); !ok {
		exclusive = true
	}
	if exclusive {
		if c.Resources.Limits == nil {
			c.Resources.Limits = corev1.ResourceList{}
		}
		c.Resources.Limits[ResCores] = *resource.NewQuantity(100, resource.DecimalSI)
		found = true
	}
	return found, true
}

// Requests is device.Resourcereqs for NVIDIA (pkg/device/devices.go:
// 639-690@v2.10.0): one Container per container, init containers first,
// from GenerateResourceRequests (pkg/device/nvidia/device.go:520-600);
// Nums 0 where the container asks for nothing (Resourcereqs keeps
// requests with Nums > 0 only). Coresreq is as GenerateResourceRequests
// returns it: the NVIDIA Fit clamps it to 100 later (see fit).
func Requests(pod *corev1.Pod, cfg RequestConfig) []Container {
	var out []Container
	for _, list := range []struct {
		ctrs []corev1.Container
		init bool
	}{{pod.Spec.InitContainers, true}, {pod.Spec.Containers, false}} {
		for i := range list.ctrs {
			c := generate(&list.ctrs[i], cfg)
			if c.Nums <= 0 {
				c = Container{}
			}
			c.Init = list.init
			out = append(out, c)
		}
	}
	return out
}

func generate(ctr *corev1.Container, cfg RequestConfig) Container {
	v, ok := limitOrRequest(ctr, ResGPU)
	if !ok {
		return Container{}
	}
	n, ok := v.AsInt64()
	if !ok {
		return Container{}
	}
	memnum := int32(0)
	if mem, ok := limitOrRequest(ctr, ResMem); ok {
		memnums, parsed := mem.AsInt64()
		factor := max(int64(cfg.MemoryFactor), 1)
		if !parsed || memnums < 0 || memnums > int64(math.MaxInt32)/factor {
			return Container{}
		}
		memnum = int32(memnums * factor)
	}
	mempnum := int32(101)
	if mem, ok := limitOrRequest(ctr, ResMemPct); ok {
		if p, ok := mem.AsInt64(); ok {
			p = min(p, 100)
			if p > 0 {
				mempnum = int32(p)
			}
		}
	}
	if mempnum == 101 && memnum == 0 {
		if cfg.DefaultMemory != 0 {
			memnum = cfg.DefaultMemory
		} else {
			mempnum = 100
		}
	}
	corenum := cfg.DefaultCores
	if core, ok := limitOrRequest(ctr, ResCores); ok {
		if cn, ok := core.AsInt64(); ok {
			corenum = int32(cn)
		}
	}
	return Container{Nums: int32(n), Memreq: memnum, MemPercentagereq: mempnum, Coresreq: corenum}
}
