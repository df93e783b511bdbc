package gpushare

import (
	"fmt"

	"sigs.k8s.io/yaml"
)

// HAMiSettings are the HAMi chart values Cozystack users tune, under
// addons.hami.valuesOverride.hami. Zero fields take the chart defaults.
type HAMiSettings struct {
	// SplitCount is devicePlugin.deviceSplitCount (default 10).
	SplitCount int32
	// MemoryScaling is devicePlugin.deviceMemoryScaling (default 1; above 1
	// oversubscribes memory).
	MemoryScaling float64
	// CoreScaling is devicePlugin.deviceCoreScaling (default 1).
	CoreScaling float64
	// NodePolicy is scheduler.defaultSchedulerPolicy.nodeSchedulerPolicy
	// (default binpack).
	NodePolicy NodePolicy
	// GPUPolicy is scheduler.defaultSchedulerPolicy.gpuSchedulerPolicy
	// (default spread).
	GPUPolicy GPUPolicy
}

// Addons is the GPU part of a Cozystack Kubernetes application's addons.
type Addons struct {
	// GPUOperator enables addons.gpuOperator.
	GPUOperator bool
	// HAMi enables addons.hami; it requires GPUOperator.
	HAMi bool
	// HAMiSettings tune HAMi when it is enabled.
	HAMiSettings HAMiSettings
}

// Values renders the addons block of a Cozystack Kubernetes application's
// values. With HAMi on, the GPU Operator's own device plugin is turned off
// (both would advertise nvidia.com/gpu; Cozystack's chart does the same),
// and HAMi's settings go under valuesOverride.hami with every default
// spelled out. HAMi without the GPU Operator is the chart's error,
// ErrHAMiRequiresGPUOperator; settings out of range wrap ErrInvalidConfig.
func (a Addons) Values() (map[string]any, error) {
	if a.HAMi && !a.GPUOperator {
		return nil, ErrHAMiRequiresGPUOperator
	}
	gpuOp := map[string]any{"enabled": a.GPUOperator, "valuesOverride": map[string]any{}}
	hami := map[string]any{"enabled": a.HAMi, "valuesOverride": map[string]any{}}
	if a.HAMi {
		s, err := a.HAMiSettings.withDefaults()
		if err != nil {
			return nil, err
		}
		gpuOp["valuesOverride"] = map[string]any{
			"gpu-operator": map[string]any{"devicePlugin": map[string]any{"enabled": false}},
		}
		hami["valuesOverride"] = map[string]any{"hami": map[string]any{
			"devicePlugin": map[string]any{
				"deviceSplitCount":    s.SplitCount,
				"deviceMemoryScaling": s.MemoryScaling,
				"deviceCoreScaling":   s.CoreScaling,
			},
			"scheduler": map[string]any{"defaultSchedulerPolicy": map[string]any{
				"nodeSchedulerPolicy": string(s.NodePolicy),
				"gpuSchedulerPolicy":  string(s.GPUPolicy),
			}},
		}}
	}
	return map[string]any{"addons": map[string]any{"gpuOperator": gpuOp, "hami": hami}}, nil
}

// YAML renders Values as YAML, keys sorted.
func (a Addons) YAML() ([]byte, error) {
	v, err := a.Values()
	if err != nil {
		return nil, err
	}
	return yaml.Marshal(v)
}

func (s HAMiSettings) withDefaults() (HAMiSettings, error) {
	if s.SplitCount == 0 {
		s.SplitCount = 10
	}
	if s.MemoryScaling == 0 {
		s.MemoryScaling = 1
	}
	if s.CoreScaling == 0 {
		s.CoreScaling = 1
	}
	if s.NodePolicy == "" {
		s.NodePolicy = NodeBinpack
	}
	if s.GPUPolicy == "" {
		s.GPUPolicy = GPUSpread
	}
	if s.SplitCount < 0 || s.MemoryScaling < 0 || s.CoreScaling < 0 {
		return s, fmt.Errorf("%w: negative split count or scaling", ErrInvalidConfig)
	}
	if _, err := ParseNodePolicy(string(s.NodePolicy)); err != nil {
		return s, fmt.Errorf("%w: %v", ErrInvalidConfig, err)
	}
	if _, err := ParseGPUPolicy(string(s.GPUPolicy)); err != nil {
		return s, fmt.Errorf("%w: %v", ErrInvalidConfig, err)
	}
	return s, nil
}

// Config returns the gpushare Config that matches these HAMi settings.
func (s HAMiSettings) Config() (Config, error) {
	s, err := s.withDefaults()
	if err != nil {
		return Config{}, err
	}
	return Config{NodePolicy: s.NodePolicy, GPUPolicy: s.GPUPolicy}, nil
}
