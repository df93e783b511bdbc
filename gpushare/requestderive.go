package gpushare

import (
	"fmt"
	"math"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// lookup reads a resource from limits, then requests.
func lookup(c *corev1.Container, name string) (resource.Quantity, bool) {
	if q, ok := c.Resources.Limits[corev1.ResourceName(name)]; ok {
		return q, true
	}
	q, ok := c.Resources.Requests[corev1.ResourceName(name)]
	return q, ok
}

// inLimits reports whether name is in the container's limits, the only
// place the webhook's mutateContainerResource looks.
func inLimits(c *corev1.Container, name string) bool {
	_, ok := c.Resources.Limits[corev1.ResourceName(name)]
	return ok
}

// deriver derives one container's request and collects its oddities.
type deriver struct {
	c    *corev1.Container
	cfg  *Config
	odd  []*RequestError
	hook bool // the webhook's defaults apply
}

func (d *deriver) warn(res, why string) {
	d.odd = append(d.odd, &RequestError{Container: d.c.Name, Resource: res, Reason: why})
}

// webhook applies HAMi v2.10's MutateAdmission to the container's view
// (pkg/device/nvidia/device.go:347-450@v2.10.0): it reports a percentage
// the webhook refuses, and returns the GPU count and cores the webhook
// would add (0 when it adds none).
func (d *deriver) webhook() (addCount, addCores int64) {
	rn := d.cfg.Resources
	// validateMemoryPercentage (device.go:389): Quantity.Value(), so 100.5
	// rounds up; every container, whatever its GPU count.
	if q, ok := lookup(d.c, rn.MemoryPercentage); ok {
		if v := q.Value(); v < 0 || v > 100 {
			d.warn(rn.MemoryPercentage, fmt.Sprintf("%s is outside 0–100: HAMi's webhook refuses the pod", q.String()))
		}
	}
	// mutateContainerResource (device.go:398): limits only.
	if !inLimits(d.c, rn.GPU) && (inLimits(d.c, rn.Cores) || inLimits(d.c, rn.Memory) || inLimits(d.c, rn.MemoryPercentage)) {
		addCount = int64(d.cfg.DefaultGPUNum)
	}
	// defaultExclusiveCoreIfNeeded (device.go:417): limits, then requests.
	_, hasCount := lookup(d.c, rn.GPU)
	_, hasCores := lookup(d.c, rn.Cores)
	if (hasCount || addCount > 0) && !hasCores {
		exclusive := false
		if q, ok := lookup(d.c, rn.MemoryPercentage); ok {
			exclusive = q.Value() == 100
		} else if _, ok := lookup(d.c, rn.Memory); !ok {
			exclusive = true
		}
		if exclusive {
			addCores = 100
		}
	}
	return addCount, addCores
}

// containerRequest derives one container's request as HAMi v2.10 does:
// the webhook's defaults (unless cfg.SkipWebhookDefaults), then
// GenerateResourceRequests (pkg/device/nvidia/device.go:520-600@v2.10.0)
// and the core clamp of the NVIDIA Fit (device.go:772). It returns the
// request and every oddity: a value HAMi clamps, ignores or refuses.
func containerRequest(c *corev1.Container, init bool, cfg *Config) (ContainerRequest, []*RequestError) {
	d := &deriver{c: c, cfg: cfg, hook: !cfg.SkipWebhookDefaults}
	out := ContainerRequest{Name: c.Name, Init: init}
	rn := cfg.Resources
	var addCount, addCores int64
	if d.hook {
		addCount, addCores = d.webhook()
	}
	count, hasCount := lookup(c, rn.GPU)
	if addCount > 0 {
		count, hasCount = *resource.NewQuantity(addCount, resource.DecimalSI), true
	}
	if !hasCount {
		return out, d.odd
	}
	n, ok := count.AsInt64()
	if !ok {
		d.warn(rn.GPU, fmt.Sprintf("%s is not a whole number of GPUs: HAMi ignores the container's GPU request", count.String()))
		return out, d.odd
	}
	// Resourcereqs (pkg/device/devices.go:639) keeps Nums > 0 after the
	// int32 conversion.
	if int64(int32(n)) != n {
		d.warn(rn.GPU, fmt.Sprintf("%s GPUs overflow int32: HAMi counts %d", count.String(), int32(n)))
	}
	if int32(n) <= 0 {
		if n < 0 {
			d.warn(rn.GPU, fmt.Sprintf("%s is negative: HAMi ignores the container's GPU request", count.String()))
		}
		return out, d.odd
	}
	if !d.memory(&out) {
		return ContainerRequest{Name: c.Name, Init: init}, d.odd
	}
	d.cores(&out, addCores)
	out.Count = int32(n)
	return out, d.odd
}

// memory reads gpumem and gpumem-percentage; false means HAMi drops the
// container's GPU request.
func (d *deriver) memory(out *ContainerRequest) bool {
	rn, factor := d.cfg.Resources, int64(d.cfg.MemoryFactor)
	if q, ok := lookup(d.c, rn.Memory); ok {
		v, ok := q.AsInt64()
		if !ok || v < 0 || v > math.MaxInt32/factor {
			d.warn(rn.Memory, fmt.Sprintf("%s is not a whole number of MiB within int32: HAMi ignores the container's GPU request", q.String()))
			return false
		}
		out.MemoryMiB = int32(v * factor)
	}
	if q, ok := lookup(d.c, rn.MemoryPercentage); ok {
		v, ok := q.AsInt64()
		switch {
		case !ok:
			d.warn(rn.MemoryPercentage, fmt.Sprintf("%s is not a whole number: HAMi ignores it", q.String()))
		case v > 100:
			d.warn(rn.MemoryPercentage, fmt.Sprintf("%s is over 100: HAMi clamps it to 100", q.String()))
			out.MemoryPercent = 100
		case v < 0:
			d.warn(rn.MemoryPercentage, fmt.Sprintf("%s is negative: HAMi ignores it", q.String()))
		default:
			out.MemoryPercent = int32(v)
		}
	}
	if out.MemoryMiB == 0 && out.MemoryPercent == 0 {
		if d.cfg.DefaultMemoryMiB != 0 {
			out.MemoryMiB = d.cfg.DefaultMemoryMiB
		} else {
			out.MemoryPercent = 100
		}
	}
	return true
}

// cores reads gpucores (or the webhook's exclusive 100) and clamps it to
// 100 as the NVIDIA Fit does.
func (d *deriver) cores(out *ContainerRequest, addCores int64) {
	rn := d.cfg.Resources
	out.Cores = d.cfg.DefaultCores
	q, ok := lookup(d.c, rn.Cores)
	if !ok && addCores > 0 {
		q, ok = *resource.NewQuantity(addCores, resource.DecimalSI), true
	}
	if !ok {
		return
	}
	v, whole := q.AsInt64()
	if !whole {
		d.warn(rn.Cores, fmt.Sprintf("%s is not a whole number: HAMi takes defaultCores %d", q.String(), d.cfg.DefaultCores))
		return
	}
	c := int32(v) // GenerateResourceRequests converts without a check
	if int64(c) != v {
		d.warn(rn.Cores, fmt.Sprintf("%s overflows int32: HAMi reads %d", q.String(), c))
	}
	switch {
	case c > 100:
		d.warn(rn.Cores, fmt.Sprintf("%s is over 100: HAMi clamps it to 100", q.String()))
		c = 100
	case c < 0:
		// HAMi would count negative cores; gpushare takes 0 (a deliberate
		// difference: usage never goes below what pods hold).
		d.warn(rn.Cores, fmt.Sprintf("%s is negative: gpushare takes 0", q.String()))
		c = 0
	}
	out.Cores = c
}
