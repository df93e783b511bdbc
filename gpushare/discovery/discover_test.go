package discovery_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cozystack/tenantkit/gpushare"
	"github.com/cozystack/tenantkit/gpushare/discovery"
)

// fakeNVML is a Library with a fixed device list, so everything above the
// NVML calls is tested without a GPU.
type fakeNVML struct {
	gpus     []discovery.GPU
	initErr  error
	gpuErr   error
	shutdown int
}

func (f *fakeNVML) Init() error         { return f.initErr }
func (f *fakeNVML) Shutdown() error     { f.shutdown++; return nil }
func (f *fakeNVML) Count() (int, error) { return len(f.gpus), nil }
func (f *fakeNVML) GPU(i int) (discovery.GPU, error) {
	if f.gpuErr != nil {
		return discovery.GPU{}, f.gpuErr
	}
	return f.gpus[i], nil
}

// sysfs writes numa_node files for bus ids under a temporary root.
func sysfs(t *testing.T, numa map[string]string) string {
	root := t.TempDir()
	for addr, v := range numa {
		dir := filepath.Join(root, "bus", "pci", "devices", addr)
		require.NoError(t, os.MkdirAll(dir, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "numa_node"), []byte(v+"\n"), 0o644))
	}
	return root
}

var twoV100 = []discovery.GPU{
	// NVML may list them out of index order; registration sorts by index.
	{UUID: "GPU-00552014-5c87-89ac-b1a6-7b53aa24b0ec", Index: 1, Name: "Tesla V100-PCIE-32GB", MemoryBytes: 34359738368, PCIBusID: "00000000:AF:00.0"},
	{UUID: "GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448", Index: 0, Name: "Tesla V100-PCIE-32GB", MemoryBytes: 34359738368, PCIBusID: "00000000:3B:00.0"},
}

func TestRegistrationFromFakeDevices(t *testing.T) {
	lib := &fakeNVML{gpus: twoV100}
	cfg := discovery.Config{Library: lib, SysfsRoot: sysfs(t, map[string]string{"0000:3b:00.0": "-1", "0000:af:00.0": "1"})}
	reg, err := discovery.Registration(context.Background(), cfg)
	require.NoError(t, err)
	require.Equal(t, 1, lib.shutdown)
	// The JSON HAMi v2.10's plugin writes for these cards (research §3.1's
	// V100 example, in JSON): index and NUMA 0 omitted, "NVIDIA-" prefix.
	require.Equal(t, `[{"id":"GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448","count":10,"devmem":32768,"devcore":100,"type":"NVIDIA-Tesla V100-PCIE-32GB","mode":"hami-core","health":true},`+
		`{"id":"GPU-00552014-5c87-89ac-b1a6-7b53aa24b0ec","index":1,"count":10,"devmem":32768,"devcore":100,"type":"NVIDIA-Tesla V100-PCIE-32GB","numa":1,"mode":"hami-core","health":true}]`, reg)
	devs, err := gpushare.DecodeNodeDevices(reg)
	require.NoError(t, err)
	s9, err := gpushare.EncodeNodeDevices(devs, gpushare.FormatFields9)
	require.NoError(t, err)
	require.Equal(t, v100Fields9, s9, "same devices as the v2.5–v2.7 worked example")
}

const v100Fields9 = "GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448,10,32768,100,NVIDIA-Tesla V100-PCIE-32GB,0,true,0,hami-core:" +
	"GPU-00552014-5c87-89ac-b1a6-7b53aa24b0ec,10,32768,100,NVIDIA-Tesla V100-PCIE-32GB,1,true,1,hami-core:"

func TestDevicesSplitScalingFilters(t *testing.T) {
	gpus := []discovery.GPU{
		{UUID: "GPU-a", Index: 0, Name: "NVIDIA A100-SXM4-80GB", MemoryBytes: 85520809984 + 1023}, // 81559 MiB and change
		{UUID: "GPU-b", Index: 1, Name: "NVIDIA GB10", MemoryUnsupported: true},
		{UUID: "GPU-c", Index: 2, Name: "NVIDIA L4", MemoryBytes: 24 << 30},
		{UUID: "GPU-d", Index: 3, Name: "NVIDIA L4", MemoryBytes: 24 << 30},
	}
	devs, err := discovery.Devices(gpus, discovery.Config{Library: &fakeNVML{}, SplitCount: 4, MemoryScaling: 1.5, CoreScaling: 2,
		FilterUUIDs: []string{"GPU-c"}, FilterIndexes: []uint{3}})
	require.NoError(t, err)
	require.Equal(t, []gpushare.Device{
		{ID: "GPU-a", Index: 0, Count: 4, MemoryMiB: 122338, Cores: 200, Type: "NVIDIA A100-SXM4-80GB", Mode: gpushare.ModeHAMiCore, Health: true},
	}, devs, "GB10 without preConfiguredDeviceMemory is skipped; filtered GPUs are left out")

	devs, err = discovery.Devices(gpus[:2], discovery.Config{Library: &fakeNVML{}, PreConfiguredMemoryMiB: 120000})
	require.NoError(t, err)
	require.Len(t, devs, 2)
	require.Equal(t, int32(120000), devs[1].MemoryMiB)
	require.Equal(t, int32(81559), devs[0].MemoryMiB)

	_, err = discovery.Devices(gpus, discovery.Config{Library: &fakeNVML{}, MemoryScaling: -1})
	require.ErrorIs(t, err, gpushare.ErrInvalidConfig)
	_, err = discovery.Devices(gpus[:1], discovery.Config{Library: &fakeNVML{}, MemoryScaling: 1e6})
	require.ErrorIs(t, err, gpushare.ErrInvalidConfig)
}

func TestDiscoverErrors(t *testing.T) {
	boom := errors.New("boom")
	_, err := discovery.Discover(context.Background(), discovery.Config{Library: &fakeNVML{initErr: &discovery.NVMLError{Call: "nvmlInit", Device: -1, Code: 9, Message: "ERROR_DRIVER_NOT_LOADED", Err: discovery.ErrNoNVML}}})
	require.ErrorIs(t, err, discovery.ErrNoNVML)
	lib := &fakeNVML{gpus: twoV100, gpuErr: boom}
	_, err = discovery.Discover(context.Background(), discovery.Config{Library: lib})
	require.ErrorIs(t, err, boom)
	require.Equal(t, 1, lib.shutdown, "shut down after a successful init")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = discovery.Discover(ctx, discovery.Config{Library: &fakeNVML{gpus: twoV100}})
	require.ErrorIs(t, err, context.Canceled)
	_, err = discovery.Registration(context.Background(), discovery.Config{Library: &fakeNVML{}})
	require.ErrorContains(t, err, "no GPU to register")
	require.Equal(t, "0000:3b:00.0", discovery.SysfsPCIAddress("00000000:3B:00.0"))
}

// driverGPUs lists the GPUs the NVIDIA kernel driver has bound, as
// /proc/driver/nvidia/gpus names them (sysfs PCI addresses, e.g.
// 0000:3b:00.0): an oracle that does not go through NVML. Empty where the
// driver is not loaded. Inside a container the NVIDIA runtime mounts only
// the GPUs given to it there.
func driverGPUs(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc/driver/nvidia/gpus")
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	require.NoError(t, err)
	var addrs []string
	for _, e := range entries {
		addrs = append(addrs, strings.ToLower(e.Name()))
	}
	return addrs
}

// TestDiscoverRealNVML uses the real go-nvml. What it expects is decided
// beforehand, from the kernel driver's own list of GPUs: without the driver
// (CI) Discover and Registration fail with ErrNoNVML from nvmlInit and do
// not crash; with it NVML must find exactly the GPUs the driver lists, and
// the registration must name each of them.
func TestDiscoverRealNVML(t *testing.T) {
	// A library that is not there is ErrNoNVML on every machine.
	_, err := discovery.Registration(context.Background(), discovery.Config{LibraryPath: "/nonexistent/libnvidia-ml.so.1"})
	require.ErrorIs(t, err, discovery.ErrNoNVML)
	var ne *discovery.NVMLError
	require.ErrorAs(t, err, &ne)
	// 12 is NVML_ERROR_LIBRARY_NOT_FOUND in nvml.h.
	require.Equal(t, discovery.NVMLError{Call: "nvmlInit", Device: -1, Code: 12, Message: "ERROR_LIBRARY_NOT_FOUND", Err: discovery.ErrNoNVML}, *ne)

	want := driverGPUs(t)
	gpus, err := discovery.Discover(context.Background(), discovery.Config{})
	if len(want) == 0 {
		require.ErrorIs(t, err, discovery.ErrNoNVML, "no NVIDIA kernel driver here")
		require.ErrorAs(t, err, &ne)
		require.Equal(t, "nvmlInit", ne.Call)
		require.Contains(t, []string{"ERROR_LIBRARY_NOT_FOUND", "ERROR_DRIVER_NOT_LOADED"}, ne.Message)
		require.Nil(t, gpus)
		_, err = discovery.Registration(context.Background(), discovery.Config{})
		require.ErrorIs(t, err, discovery.ErrNoNVML)
		return
	}
	if errors.As(err, &ne) && ne.Message == "ERROR_LIBRARY_NOT_FOUND" {
		t.Skipf("the NVIDIA driver lists GPUs %v but libnvidia-ml is not installed here: %v", want, err)
	}
	require.NoError(t, err, "the NVIDIA driver lists GPUs %v", want)
	var got, uuids []string
	for _, g := range gpus {
		got = append(got, discovery.SysfsPCIAddress(g.PCIBusID))
		if !g.MemoryUnsupported { // skipped without PreConfiguredMemoryMiB
			uuids = append(uuids, g.UUID)
		}
		require.True(t, strings.HasPrefix(g.UUID, "GPU-"), g.UUID)
		require.NotEmpty(t, g.Name)
	}
	require.ElementsMatch(t, want, got, "NVML finds the GPUs the driver lists")
	reg, err := discovery.Registration(context.Background(), discovery.Config{})
	require.NoError(t, err)
	devs, err := gpushare.DecodeNodeDevices(reg)
	require.NoError(t, err)
	var regIDs []string
	for _, d := range devs {
		regIDs = append(regIDs, d.ID)
	}
	require.ElementsMatch(t, uuids, regIDs, "every discovered GPU is registered")
	t.Logf("discovered %d GPUs: %s", len(devs), reg)
}
