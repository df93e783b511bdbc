package gpushare

import (
	"fmt"
	"strconv"
	"strings"
)

// DeviceAllocation is one container's share of one GPU, as HAMi's scheduler
// writes it in hami.io/vgpu-devices-allocated: "UUID,NVIDIA,MiB,cores".
type DeviceAllocation struct {
	// UUID is the GPU UUID as written. Allocations made by dynamic MIG
	// before HAMi v2.10 carry a "[template-slot]" suffix; DeviceID strips
	// it.
	UUID string
	// Type is the vendor word, VendorNVIDIA for NVIDIA GPUs (not the model).
	Type string
	// MemoryMiB is the resolved memory: percentages and memoryFactor
	// already applied.
	MemoryMiB int32
	// Cores is the compute share in percent.
	Cores int32
}

// DeviceID returns the GPU UUID without a legacy MIG "[…]" suffix.
func (a DeviceAllocation) DeviceID() string {
	if i := strings.IndexByte(a.UUID, '['); i > 0 {
		return a.UUID[:i]
	}
	return a.UUID
}

// ContainerAllocation is the GPUs of one container; empty for a container
// without GPUs.
type ContainerAllocation []DeviceAllocation

// PodAllocation is a pod's GPUs, one entry per container position. Since
// HAMi v2.9 the positions list init containers first, then app containers;
// before, app containers only. Accounting should not rely on positions.
type PodAllocation []ContainerAllocation

// Devices returns every device entry of every container, in order.
func (p PodAllocation) Devices() []DeviceAllocation {
	var out []DeviceAllocation
	for _, c := range p {
		out = append(out, c...)
	}
	return out
}

// String encodes p as HAMi writes it (see EncodePodDevices).
func (p PodAllocation) String() string { return EncodePodDevices(p) }

// EncodePodDevices writes a pod allocation as HAMi's scheduler writes
// hami.io/vgpu-devices-allocated and hami.io/vgpu-devices-to-allocate:
// every device is "UUID,TYPE,MiB,cores" followed by ':', every container
// (the last included, empty ones too) is followed by ';'. One container
// with one GPU reads "GPU-0fc3…,NVIDIA,3000,30:;".
func EncodePodDevices(p PodAllocation) string {
	var b strings.Builder
	for _, c := range p {
		for _, d := range c {
			b.WriteString(d.UUID)
			b.WriteByte(',')
			b.WriteString(d.Type)
			b.WriteByte(',')
			b.WriteString(strconv.FormatInt(int64(d.MemoryMiB), 10))
			b.WriteByte(',')
			b.WriteString(strconv.FormatInt(int64(d.Cores), 10))
			b.WriteByte(':')
		}
		b.WriteByte(';')
	}
	return b.String()
}

// DecodePodDevices decodes hami.io/vgpu-devices-allocated (or
// -to-allocate, which has the same grammar). The ';' after the last
// container ends it and does not open another; empty containers keep their
// positions, so ";;" is two containers without GPUs. A device needs at
// least four comma fields (more are ignored, as HAMi does): a UUID, a type,
// and non-negative 32-bit memory and cores. Errors are *AnnotationError.
func DecodePodDevices(value string) (PodAllocation, error) {
	return decodePodDevices(AnnotationAllocated, value)
}

func decodePodDevices(key, value string) (PodAllocation, error) {
	p, err := parsePodDevices(value)
	if err != nil {
		return nil, &AnnotationError{Key: key, Value: value, Reason: err.Error()}
	}
	return p, nil
}

func parsePodDevices(value string) (PodAllocation, error) {
	if value == "" {
		return PodAllocation{}, nil
	}
	n := strings.Count(value, ";")
	if !strings.HasSuffix(value, ";") {
		n++
	}
	p := make(PodAllocation, 0, n)
	for rest := value; rest != ""; {
		var part string
		part, rest, _ = strings.Cut(rest, ";")
		c, err := parseContainerDevices(part)
		if err != nil {
			return nil, fmt.Errorf("container %d: %w", len(p), err)
		}
		p = append(p, c)
	}
	return p, nil
}

func parseContainerDevices(s string) (ContainerAllocation, error) {
	if s == "" {
		return ContainerAllocation{}, nil
	}
	c := make(ContainerAllocation, 0, strings.Count(s, ":")+1)
	for rest := s; rest != ""; {
		var seg string
		seg, rest, _ = strings.Cut(rest, ":")
		if seg == "" {
			continue
		}
		d, err := parseDeviceAllocation(seg)
		if err != nil {
			return nil, fmt.Errorf("device %d: %w", len(c), err)
		}
		c = append(c, d)
	}
	return c, nil
}

func parseDeviceAllocation(seg string) (DeviceAllocation, error) {
	var f [4]string
	rest, ok := seg, true
	for i := range f {
		if !ok {
			return DeviceAllocation{}, fmt.Errorf("%d comma fields, want UUID,TYPE,MiB,cores", i)
		}
		f[i], rest, ok = strings.Cut(rest, ",")
	}
	d := DeviceAllocation{UUID: f[0], Type: f[1]}
	switch {
	case d.UUID == "":
		return d, fmt.Errorf("empty UUID")
	case d.Type == "":
		return d, fmt.Errorf("empty type")
	case strings.IndexByte(d.UUID, '[') == 0,
		strings.IndexByte(d.UUID, '[') > 0 && !strings.HasSuffix(d.UUID, "]"):
		return d, fmt.Errorf("UUID %q: malformed MIG suffix", d.UUID)
	}
	var err error
	if d.MemoryMiB, err = parseNonNegInt32("memory", f[2]); err != nil {
		return d, err
	}
	if d.Cores, err = parseNonNegInt32("cores", f[3]); err != nil {
		return d, err
	}
	return d, nil
}

func parseNonNegInt32(field, s string) (int32, error) {
	n, err := parseInt32(field, s)
	if err != nil {
		return 0, err
	}
	if n < 0 {
		return 0, fmt.Errorf("%s %d: negative", field, n)
	}
	return n, nil
}
