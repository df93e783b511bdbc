package discovery

// GPU is what NVML reports about one local GPU.
type GPU struct {
	// UUID is the GPU UUID (nvmlDeviceGetUUID).
	UUID string
	// Index is the NVML index (nvmlDeviceGetIndex).
	Index uint
	// Name is the NVML model name, e.g. "Tesla V100-PCIE-32GB"
	// (nvmlDeviceGetName); HAMi's type adds "NVIDIA-" when it does not
	// start with "NVIDIA".
	Name string
	// MemoryBytes is the total memory (nvmlDeviceGetMemoryInfo).
	MemoryBytes uint64
	// MemoryUnsupported reports that nvmlDeviceGetMemoryInfo returned
	// NOT_SUPPORTED (unified-memory devices such as GB10).
	MemoryUnsupported bool
	// PCIBusID is the bus id as NVML writes it, e.g. "00000000:3B:00.0".
	PCIBusID string
	// NUMA is the NUMA node read from sysfs by Discover (-1 in sysfs
	// becomes 0, as in HAMi).
	NUMA int
	// MIGEnabled reports the current MIG mode (nvmlDeviceGetMigMode).
	MIGEnabled bool
}

// Library is the part of NVML discovery needs. The driver's is the
// default (Config.Library nil); tests pass a fake to exercise everything
// above the NVML calls.
type Library interface {
	// Init loads and initialises NVML. An error wrapping ErrNoNVML means
	// there is no driver.
	Init() error
	// Shutdown releases NVML after a successful Init.
	Shutdown() error
	// Count returns the number of GPUs.
	Count() (int, error)
	// GPU reads GPU i (0 ≤ i < Count); NUMA is left for Discover.
	GPU(i int) (GPU, error)
}
