package discovery

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sort"

	"github.com/cozystack/tenantkit/gpushare"
)

// Config says where to find NVML and how HAMi's device plugin is set up on
// the node. The zero value uses the driver's libnvidia-ml, /sys, and HAMi's
// chart defaults: gpushare.DefaultDeviceSplitCount (10),
// DefaultDeviceMemoryScaling and DefaultDeviceCoreScaling (1).
type Config struct {
	// Library replaces NVML, e.g. with a fake in tests. Nil means
	// the driver's libnvidia-ml, loaded from LibraryPath.
	Library Library
	// LibraryPath is the libnvidia-ml to load; "" means libnvidia-ml.so.1.
	LibraryPath string
	// SysfsRoot is where sysfs is mounted; "" means /sys.
	SysfsRoot string

	// SplitCount is deviceSplitCount, the tasks per GPU (0 means
	// gpushare.DefaultDeviceSplitCount).
	SplitCount int32
	// MemoryScaling is deviceMemoryScaling (0 means
	// gpushare.DefaultDeviceMemoryScaling; above 1 oversubscribes).
	MemoryScaling float64
	// CoreScaling is deviceCoreScaling (0 means
	// gpushare.DefaultDeviceCoreScaling).
	CoreScaling float64
	// PreConfiguredMemoryMiB is preConfiguredDeviceMemory: the memory of
	// GPUs whose NVML memory query is not supported; without it such GPUs
	// are skipped, as HAMi does.
	PreConfiguredMemoryMiB int32
	// FilterUUIDs are the plugin's filterdevices.uuid: GPUs never
	// registered.
	FilterUUIDs []string
	// FilterIndexes are the plugin's filterdevices.index.
	FilterIndexes []uint

	// Logger receives debug logs; nil discards them.
	Logger *slog.Logger
}

func (c Config) withDefaults() (Config, error) {
	if c.Library == nil {
		c.Library = newNVMLLibrary(c.LibraryPath)
	}
	if c.SysfsRoot == "" {
		c.SysfsRoot = "/sys"
	}
	if c.SplitCount == 0 {
		c.SplitCount = gpushare.DefaultDeviceSplitCount
	}
	if c.MemoryScaling == 0 {
		c.MemoryScaling = gpushare.DefaultDeviceMemoryScaling
	}
	if c.CoreScaling == 0 {
		c.CoreScaling = gpushare.DefaultDeviceCoreScaling
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.SplitCount < 0 || c.MemoryScaling < 0 || c.CoreScaling < 0 || c.PreConfiguredMemoryMiB < 0 {
		return c, fmt.Errorf("%w: negative split count, scaling or preconfigured memory", gpushare.ErrInvalidConfig)
	}
	return c, nil
}

// Discover enumerates the local GPUs through NVML, by index, with their
// NUMA node from sysfs. Without an NVIDIA driver it returns an error
// wrapping ErrNoNVML; it never panics. ctx is checked between GPUs.
func Discover(ctx context.Context, cfg Config) ([]GPU, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	lib := cfg.Library
	if err := lib.Init(); err != nil {
		return nil, fmt.Errorf("discover GPUs: %w", err)
	}
	defer func() {
		if err := lib.Shutdown(); err != nil {
			cfg.Logger.Debug("nvml shutdown", "err", err)
		}
	}()
	n, err := lib.Count()
	if err != nil {
		return nil, fmt.Errorf("discover GPUs: %w", err)
	}
	gpus := make([]GPU, 0, n)
	for i := range n {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("discover GPUs: %w", err)
		}
		g, err := lib.GPU(i)
		if err != nil {
			return nil, fmt.Errorf("discover GPUs: %w", err)
		}
		if g.NUMA, err = numaNode(cfg.SysfsRoot, g.PCIBusID); err != nil {
			cfg.Logger.Debug("no NUMA node, using 0", "gpu", g.UUID, "err", err)
		}
		gpus = append(gpus, g)
	}
	sort.Slice(gpus, func(i, j int) bool { return gpus[i].Index < gpus[j].Index })
	return gpus, nil
}

// Devices turns discovered GPUs into the registration HAMi's device plugin
// (v2.8+, hami-core mode) writes for them, as gpushare devices:
//
//   - count = SplitCount;
//   - devmem = ⌊MiB × MemoryScaling⌋ with MiB = bytes / 2²⁰ rounded down,
//     or PreConfiguredMemoryMiB × MemoryScaling when NVML cannot report
//     memory (the GPU is skipped without it);
//   - devcore = ⌊gpushare.DefaultDeviceCores (100) × CoreScaling⌋;
//   - type = gpushare.TypeName(name) ("NVIDIA-" unless it starts with
//     "NVIDIA");
//   - mode hami-core, healthy;
//   - filtered GPUs left out.
//
// The result is ordered by index (HAMi's plugin ranges over a map, so its
// order varies between scans). GPUs in MIG mode are registered in
// hami-core mode too: dynamic MIG profiles are not discovered.
func Devices(gpus []GPU, cfg Config) ([]gpushare.Device, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	out := make([]gpushare.Device, 0, len(gpus))
	for _, g := range gpus {
		if slices.Contains(cfg.FilterUUIDs, g.UUID) || slices.Contains(cfg.FilterIndexes, g.Index) {
			continue
		}
		mib := int64(g.MemoryBytes / 1024 / 1024)
		if g.MemoryUnsupported {
			if cfg.PreConfiguredMemoryMiB == 0 {
				cfg.Logger.Debug("skipping GPU without memory info", "gpu", g.UUID)
				continue
			}
			mib = int64(cfg.PreConfiguredMemoryMiB)
		}
		mem := int64(float64(mib) * cfg.MemoryScaling)
		if mem > 1<<31-1 {
			return nil, fmt.Errorf("GPU %s: %d MiB after scaling overflows int32: %w", g.UUID, mem, gpushare.ErrInvalidConfig)
		}
		out = append(out, gpushare.Device{
			ID: g.UUID, Index: g.Index, Count: cfg.SplitCount, MemoryMiB: int32(mem),
			Cores: int32(gpushare.DefaultDeviceCores * cfg.CoreScaling), Type: gpushare.TypeName(g.Name), NUMA: g.NUMA,
			Mode: gpushare.ModeHAMiCore, Health: true,
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Index < out[j].Index })
	return out, nil
}

// Registration discovers the local GPUs and returns the
// hami.io/node-nvidia-register value HAMi's device plugin would write for
// them (gpushare.FormatJSON). Without a driver the error wraps ErrNoNVML.
func Registration(ctx context.Context, cfg Config) (string, error) {
	gpus, err := Discover(ctx, cfg)
	if err != nil {
		return "", err
	}
	devs, err := Devices(gpus, cfg)
	if err != nil {
		return "", err
	}
	if len(devs) == 0 {
		return "", fmt.Errorf("discover GPUs: %w", ErrNoGPU)
	}
	return gpushare.EncodeNodeDevices(devs, gpushare.FormatJSON)
}
