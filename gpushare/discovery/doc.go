// Package discovery finds the local NVIDIA GPUs through NVML (go-nvml) and
// produces the registration HAMi's device plugin would write for them in
// hami.io/node-nvidia-register.
//
//	reg, err := discovery.Registration(ctx, discovery.Config{})
//	if errors.Is(err, discovery.ErrNoNVML) {
//		// no NVIDIA driver on this machine
//	}
//
// Discover reads UUID, NVML index, name, total memory, PCI bus id and MIG
// mode of each GPU, and its NUMA node from
// /sys/bus/pci/devices/<bus id>/numa_node (as HAMi does, not through
// nvmlDeviceGetNumaNodeId). Devices applies the plugin's settings (split
// count, memory and core scaling, preconfigured memory, filtered devices)
// and HAMi's naming rule ("NVIDIA-" before names that do not start with
// "NVIDIA"), giving gpushare.Device values; Registration encodes them as
// HAMi v2.10's JSON, byte for byte.
//
// go-nvml loads libnvidia-ml with dlopen when NVML is initialised, so
// programs that import this package build and start on machines without
// the driver; Discover then returns an error wrapping ErrNoNVML and never
// panics. Dynamic MIG profiles are not discovered: every GPU registers in
// hami-core mode.
//
// # Errors
//
// ErrNoNVML when the driver or libnvidia-ml is missing; *NVMLError for any
// NVML call that fails (with the call, the device index and NVML's code);
// gpushare.ErrInvalidConfig for settings out of range; ctx's error when
// cancelled between GPUs.
//
// # Testing
//
// The NVML calls sit behind the small Library interface. Tests pass a fake
// Library with a fixed device list and a temporary sysfs root
// (Config.SysfsRoot) to check the registration produced, byte for byte;
// one test uses the real go-nvml and, on a machine without a GPU, checks
// that Discover fails with ErrNoNVML.
package discovery
