package discovery

import (
	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// nvmlLibrary is Library over go-nvml. go-nvml dlopens libnvidia-ml when
// Init is called, so a binary that uses it starts fine on machines without
// the driver; Init then fails with ERROR_LIBRARY_NOT_FOUND.
type nvmlLibrary struct {
	lib nvml.Interface
}

// newNVMLLibrary returns the Library backed by the NVIDIA driver's
// libnvidia-ml, loaded from path ("" means libnvidia-ml.so.1 from the
// loader's path).
func newNVMLLibrary(path string) Library {
	var opts []nvml.LibraryOption
	if path != "" {
		opts = append(opts, nvml.WithLibraryPath(path))
	}
	return &nvmlLibrary{lib: nvml.New(opts...)}
}

func nvmlErr(call string, dev int, ret nvml.Return) error {
	e := &NVMLError{Call: call, Device: dev, Code: int(ret), Message: ret.Error()}
	if ret == nvml.ERROR_LIBRARY_NOT_FOUND || ret == nvml.ERROR_DRIVER_NOT_LOADED {
		e.Err = ErrNoNVML
	}
	return e
}

// Init loads libnvidia-ml and initialises NVML.
func (n *nvmlLibrary) Init() error {
	if ret := n.lib.Init(); ret != nvml.SUCCESS {
		return nvmlErr("nvmlInit", -1, ret)
	}
	return nil
}

// Shutdown shuts NVML down.
func (n *nvmlLibrary) Shutdown() error {
	if ret := n.lib.Shutdown(); ret != nvml.SUCCESS {
		return nvmlErr("nvmlShutdown", -1, ret)
	}
	return nil
}

// Count returns nvmlDeviceGetCount.
func (n *nvmlLibrary) Count() (int, error) {
	c, ret := n.lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return 0, nvmlErr("nvmlDeviceGetCount", -1, ret)
	}
	return c, nil
}

// GPU reads device i through its NVML handle.
func (n *nvmlLibrary) GPU(i int) (GPU, error) {
	dev, ret := n.lib.DeviceGetHandleByIndex(i)
	if ret != nvml.SUCCESS {
		return GPU{}, nvmlErr("nvmlDeviceGetHandleByIndex", i, ret)
	}
	var g GPU
	if g.UUID, ret = dev.GetUUID(); ret != nvml.SUCCESS {
		return GPU{}, nvmlErr("nvmlDeviceGetUUID", i, ret)
	}
	idx, ret := dev.GetIndex()
	if ret != nvml.SUCCESS {
		return GPU{}, nvmlErr("nvmlDeviceGetIndex", i, ret)
	}
	g.Index = uint(idx)
	if g.Name, ret = dev.GetName(); ret != nvml.SUCCESS {
		return GPU{}, nvmlErr("nvmlDeviceGetName", i, ret)
	}
	mem, ret := dev.GetMemoryInfo()
	switch ret {
	case nvml.SUCCESS:
		g.MemoryBytes = mem.Total
	case nvml.ERROR_NOT_SUPPORTED:
		g.MemoryUnsupported = true
	default:
		return GPU{}, nvmlErr("nvmlDeviceGetMemoryInfo", i, ret)
	}
	pci, ret := dev.GetPciInfo()
	if ret != nvml.SUCCESS {
		return GPU{}, nvmlErr("nvmlDeviceGetPciInfo", i, ret)
	}
	g.PCIBusID = busID(pci.BusId[:])
	current, _, ret := dev.GetMigMode()
	switch ret {
	case nvml.SUCCESS:
		g.MIGEnabled = current == nvml.DEVICE_MIG_ENABLE
	case nvml.ERROR_NOT_SUPPORTED:
	default:
		return GPU{}, nvmlErr("nvmlDeviceGetMigMode", i, ret)
	}
	return g, nil
}

// busID turns NVML's NUL-terminated char array into a string.
func busID(b []int8) string {
	out := make([]byte, 0, len(b))
	for _, c := range b {
		if c == 0 {
			break
		}
		out = append(out, byte(c))
	}
	return string(out)
}
