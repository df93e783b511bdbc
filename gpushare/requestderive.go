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
	c   *corev1.Container
	cfg *Config
	odd []*RequestError
}

func (d *deriver) warn(res, why string) {
	d.odd = append(d.odd, &RequestError{Container: d.c.Name, Resource: res, Reason: why})
}

// containerRequest derives one container's request as HAMi v2.10 does:
// the webhook's defaults (when hook), then GenerateResourceRequests
// (pkg/device/nvidia/device.go:520-600@v2.10.0) and the core clamp of the
// NVIDIA Fit (device.go:772). It returns the request and every oddity: a
// value HAMi clamps or ignores. The error is a *RequestError for cores
// HAMi would count negative.
func containerRequest(c *corev1.Container, init bool, cfg *Config, hook bool) (ContainerRequest, []*RequestError, error) {
	d := &deriver{c: c, cfg: cfg}
	out := ContainerRequest{Name: c.Name, Init: init}
	rn := cfg.Resources
	var addCount, addCores int64
	if hook {
		addCount, addCores = webhookDefaults(c, cfg)
	}
	count, hasCount := lookup(c, rn.GPU)
	if addCount > 0 {
		count, hasCount = quantity(addCount), true
	}
	if !hasCount {
		return out, d.odd, nil
	}
	n, ok := count.AsInt64()
	if !ok {
		d.warn(rn.GPU, fmt.Sprintf("%s is not a whole number of GPUs: HAMi ignores the container's GPU request", count.String()))
		return out, d.odd, nil
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
		return out, d.odd, nil
	}
	if !d.memory(&out) {
		return ContainerRequest{Name: c.Name, Init: init}, d.odd, nil
	}
	if err := d.cores(&out, addCores); err != nil {
		return out, d.odd, err
	}
	out.Count = int32(n)
	return out, d.odd, nil
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
// 100 as the NVIDIA Fit does. Cores that HAMi reads as negative (a
// negative value, or one its int32 conversion turns negative) are a
// *RequestError: HAMi would count them, lowering the GPU's core usage
// below what its pods hold, and let the pod onto a card whose cores are
// all allocated; gpushare refuses to predict that.
func (d *deriver) cores(out *ContainerRequest, addCores int64) error {
	rn := d.cfg.Resources
	out.Cores = d.cfg.DefaultCores
	q, ok := lookup(d.c, rn.Cores)
	if !ok && addCores > 0 {
		q, ok = quantity(addCores), true
	}
	if !ok {
		return nil
	}
	v, whole := q.AsInt64()
	if !whole {
		d.warn(rn.Cores, fmt.Sprintf("%s is not a whole number: HAMi takes defaultCores %d", q.String(), d.cfg.DefaultCores))
		return nil
	}
	c := int32(v) // GenerateResourceRequests converts without a check
	if c < 0 {
		return &RequestError{Container: d.c.Name, Resource: rn.Cores, Reason: fmt.Sprintf(
			"%s is read by HAMi as %d cores, which it would subtract from the GPU's usage", q.String(), c)}
	}
	if int64(c) != v {
		d.warn(rn.Cores, fmt.Sprintf("%s overflows int32: HAMi reads %d", q.String(), c))
	}
	if c > 100 {
		d.warn(rn.Cores, fmt.Sprintf("%s is over 100: HAMi clamps it to 100", q.String()))
		c = 100
	}
	out.Cores = c
	return nil
}
