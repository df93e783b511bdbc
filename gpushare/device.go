package gpushare

import "strings"

// Device is one physical GPU as HAMi's device plugin registers it in the
// node annotation hami.io/node-nvidia-register (HAMi's DeviceInfo). Memory
// and cores are capacities already scaled by deviceMemoryScaling and
// deviceCoreScaling.
type Device struct {
	// ID is the GPU UUID, e.g. "GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448".
	// Devices are keyed by ID: HAMi's registration order is not stable.
	ID string
	// Index is the NVML index.
	Index uint
	// Count is the number of tasks that may share the GPU
	// (deviceSplitCount): its slots.
	Count int32
	// MemoryMiB is the registered memory (devmem).
	MemoryMiB int32
	// Cores is the registered compute, 100 per card × deviceCoreScaling
	// (devcore).
	Cores int32
	// Type is the model with HAMi's prefix rule, e.g. "NVIDIA A100-SXM4-80GB"
	// or "NVIDIA-Tesla V100-PCIE-32GB".
	Type string
	// NUMA is the NUMA node the GPU is attached to.
	NUMA int
	// Mode is ModeHAMiCore or ModeMIG; decoders turn an empty mode into
	// ModeHAMiCore.
	Mode string
	// MIGProfiles lists the dynamic MIG profiles of a GPU in ModeMIG.
	MIGProfiles []MIGProfile
	// Health reports whether the device plugin considers the GPU healthy.
	// A JSON registration without "health" means unhealthy.
	Health bool
}

// MIGProfile is a dynamic MIG profile a GPU in ModeMIG offers (HAMi v2.10).
type MIGProfile struct {
	// Name is the profile, e.g. "1g.10gb".
	Name string
	// MemoryMiB is the memory of one instance.
	MemoryMiB int32
	// Cores is the compute share of one instance in percent.
	Cores int32
	// SliceCount is the number of memory slices one instance takes.
	SliceCount uint32
	// Placements are the possible placements of an instance.
	Placements []MIGPlacement
}

// MIGPlacement is a possible placement of a MIG instance.
type MIGPlacement struct {
	// Start is the first memory slice.
	Start uint32
	// Size is the number of slices.
	Size uint32
}

// IsNVIDIA reports whether HAMi's scheduler treats the device as an NVIDIA
// GPU: its type contains "nvidia", case-insensitively.
func (d Device) IsNVIDIA() bool {
	return strings.Contains(strings.ToLower(d.Type), "nvidia")
}

// TypeName applies HAMi's (v2.8+) naming rule to an NVML device name: a
// name that starts with "NVIDIA" is kept, any other gets the prefix
// "NVIDIA-". So "NVIDIA A100-SXM4-80GB" stays and "Tesla V100-PCIE-32GB"
// becomes "NVIDIA-Tesla V100-PCIE-32GB".
func TypeName(nvmlName string) string {
	if strings.HasPrefix(nvmlName, "NVIDIA") {
		return nvmlName
	}
	return "NVIDIA-" + nvmlName
}

func cloneDevices(in []Device) []Device {
	if in == nil {
		return nil
	}
	out := make([]Device, len(in))
	copy(out, in)
	for i := range out {
		if in[i].MIGProfiles != nil {
			out[i].MIGProfiles = make([]MIGProfile, len(in[i].MIGProfiles))
			copy(out[i].MIGProfiles, in[i].MIGProfiles)
			for j := range out[i].MIGProfiles {
				p := &out[i].MIGProfiles[j]
				p.Placements = append([]MIGPlacement(nil), p.Placements...)
			}
		}
	}
	return out
}
