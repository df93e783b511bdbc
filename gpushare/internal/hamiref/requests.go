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

// Webhook is MutateAdmission for every container of pod, init containers
// first (pkg/scheduler/webhook.go:74-98, pkg/device/nvidia/device.go:
// 347-450@v2.10.0), on a copy: it returns the mutated pod, or false when
// validateMemoryPercentage refuses a container (a percentage whose
// Quantity.Value() is outside 0–100, whatever the container's GPUs).
func Webhook(pod *corev1.Pod, cfg RequestConfig) (*corev1.Pod, bool) {
	p := pod.DeepCopy()
	for _, list := range [][]corev1.Container{p.Spec.InitContainers, p.Spec.Containers} {
		for i := range list {
			c := &list[i]
			if q, ok := limitOrRequest(c, ResMemPct); ok && (q.Value() < 0 || q.Value() > 100) {
				return nil, false
			}
			// mutateContainerResource: limits only.
			_, hasCount := limit(c, ResGPU)
			_, hasCores := limit(c, ResCores)
			_, hasMem := limit(c, ResMem)
			_, hasPct := limit(c, ResMemPct)
			if !hasCount && (hasCores || hasMem || hasPct) && cfg.DefaultGPUNum > 0 {
				c.Resources.Limits[ResGPU] = *resource.NewQuantity(int64(cfg.DefaultGPUNum), resource.BinarySI)
			}
			// defaultExclusiveCoreIfNeeded: limits, then requests.
			if _, ok := limitOrRequest(c, ResGPU); !ok {
				continue
			}
			if _, ok := limitOrRequest(c, ResCores); ok {
				continue
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
			}
		}
	}
	return p, true
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
