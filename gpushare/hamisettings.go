package gpushare

import (
	"encoding/json"
	"fmt"
	"strings"
)

// HAMiSettings are the values of HAMi's chart that decide its accounting,
// as a Cozystack Kubernetes application sets them under
// addons.hami.valuesOverride.hami. Zero fields take HAMi's chart defaults.
// This type is the one place tenantkit reads and writes those values.
type HAMiSettings struct {
	// SplitCount is devicePlugin.deviceSplitCount (default
	// DefaultDeviceSplitCount, 10).
	SplitCount int32
	// MemoryScaling is devicePlugin.deviceMemoryScaling (default
	// DefaultDeviceMemoryScaling, 1; above 1 oversubscribes memory).
	MemoryScaling float64
	// CoreScaling is devicePlugin.deviceCoreScaling (default
	// DefaultDeviceCoreScaling, 1).
	CoreScaling float64
	// NodePolicy is scheduler.defaultSchedulerPolicy.nodeSchedulerPolicy
	// (default binpack).
	NodePolicy NodePolicy
	// GPUPolicy is scheduler.defaultSchedulerPolicy.gpuSchedulerPolicy
	// (default spread).
	GPUPolicy GPUPolicy
	// Resources are resourceName, resourceMem, resourceMemPercentage and
	// resourceCores (default nvidia.com/gpu, gpumem, gpumem-percentage,
	// gpucores).
	Resources ResourceNames
	// SkipWebhook is scheduler.admissionWebhook.enabled set to false:
	// pods then get neither the refusals nor the defaults of HAMi's
	// webhook (Config.SkipWebhook).
	SkipWebhook bool
}

// ParseHAMiValues reads the HAMi settings from the valuesOverride of a
// Kubernetes application's hami addon (the settings live under its "hami"
// key). Values it does not read are ignored; a value of the wrong type or
// an unknown policy wraps ErrInvalidConfig and names the value's path.
func ParseHAMiValues(valuesOverride map[string]any) (HAMiSettings, error) {
	r := valuesReader{m: valuesOverride}
	s := HAMiSettings{
		SplitCount:    int32(r.number("hami", "devicePlugin", "deviceSplitCount")),
		MemoryScaling: r.number("hami", "devicePlugin", "deviceMemoryScaling"),
		CoreScaling:   r.number("hami", "devicePlugin", "deviceCoreScaling"),
		NodePolicy:    NodePolicy(r.str("hami", "scheduler", "defaultSchedulerPolicy", "nodeSchedulerPolicy")),
		GPUPolicy:     GPUPolicy(r.str("hami", "scheduler", "defaultSchedulerPolicy", "gpuSchedulerPolicy")),
		Resources: ResourceNames{GPU: r.str("hami", "resourceName"), Memory: r.str("hami", "resourceMem"),
			MemoryPercentage: r.str("hami", "resourceMemPercentage"), Cores: r.str("hami", "resourceCores")},
	}
	if on, ok := r.boolean("hami", "scheduler", "admissionWebhook", "enabled"); ok {
		s.SkipWebhook = !on
	}
	if r.err != nil {
		return HAMiSettings{}, r.err
	}
	if _, err := s.withDefaults(); err != nil {
		return HAMiSettings{}, err
	}
	return s, nil
}

// Values returns the valuesOverride of the hami addon for these settings,
// with every default spelled out under "hami". Settings out of range wrap
// ErrInvalidConfig. The chart itself turns the GPU Operator's device plugin
// off when HAMi is on, and refuses HAMi without the GPU Operator.
func (s HAMiSettings) Values() (map[string]any, error) {
	s, err := s.withDefaults()
	if err != nil {
		return nil, err
	}
	hami := map[string]any{
		"devicePlugin": map[string]any{
			"deviceSplitCount":    s.SplitCount,
			"deviceMemoryScaling": s.MemoryScaling,
			"deviceCoreScaling":   s.CoreScaling,
		},
		"scheduler": map[string]any{"defaultSchedulerPolicy": map[string]any{
			"nodeSchedulerPolicy": string(s.NodePolicy),
			"gpuSchedulerPolicy":  string(s.GPUPolicy),
		}},
	}
	for key, v := range map[string]string{"resourceName": s.Resources.GPU, "resourceMem": s.Resources.Memory,
		"resourceMemPercentage": s.Resources.MemoryPercentage, "resourceCores": s.Resources.Cores} {
		if v != "" {
			hami[key] = v
		}
	}
	if s.SkipWebhook {
		hami["scheduler"].(map[string]any)["admissionWebhook"] = map[string]any{"enabled": false}
	}
	return map[string]any{"hami": hami}, nil
}

// Config returns the gpushare Config that matches these HAMi settings.
func (s HAMiSettings) Config() (Config, error) {
	s, err := s.withDefaults()
	if err != nil {
		return Config{}, err
	}
	return Config{NodePolicy: s.NodePolicy, GPUPolicy: s.GPUPolicy, Resources: s.Resources,
		SkipWebhook: s.SkipWebhook}, nil
}

func (s HAMiSettings) withDefaults() (HAMiSettings, error) {
	if s.SplitCount == 0 {
		s.SplitCount = DefaultDeviceSplitCount
	}
	if s.MemoryScaling == 0 {
		s.MemoryScaling = DefaultDeviceMemoryScaling
	}
	if s.CoreScaling == 0 {
		s.CoreScaling = DefaultDeviceCoreScaling
	}
	if s.NodePolicy == "" {
		s.NodePolicy = defaultNodePolicy
	}
	if s.GPUPolicy == "" {
		s.GPUPolicy = defaultGPUPolicy
	}
	if s.SplitCount < 0 || s.MemoryScaling < 0 || s.CoreScaling < 0 {
		return s, fmt.Errorf("%w: negative split count or scaling", ErrInvalidConfig)
	}
	if _, err := ParseNodePolicy(string(s.NodePolicy)); err != nil {
		return s, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	if _, err := ParseGPUPolicy(string(s.GPUPolicy)); err != nil {
		return s, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	return s, nil
}

// valuesReader reads typed values from nested Helm values; the first type
// error sticks.
type valuesReader struct {
	m   map[string]any
	err error
}

func (r *valuesReader) lookup(path ...string) (any, bool) {
	var v any = r.m
	for _, k := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = mm[k]; !ok {
			return nil, false
		}
	}
	return v, v != nil
}

func (r *valuesReader) fail(path []string, want string, v any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: valuesOverride.%s: want %s, got %T", ErrInvalidConfig, strings.Join(path, "."), want, v)
	}
}

func (r *valuesReader) str(path ...string) string {
	v, ok := r.lookup(path...)
	s, isStr := v.(string)
	if ok && !isStr {
		r.fail(path, "a string", v)
	}
	return s
}

func (r *valuesReader) boolean(path ...string) (bool, bool) {
	v, ok := r.lookup(path...)
	b, isBool := v.(bool)
	if ok && !isBool {
		r.fail(path, "a bool", v)
	}
	return b, ok && isBool
}

func (r *valuesReader) number(path ...string) float64 {
	v, ok := r.lookup(path...)
	if !ok {
		return 0
	}
	switch n := v.(type) {
	case int:
		return float64(n)
	case int32:
		return float64(n)
	case int64:
		return float64(n)
	case float64:
		return n
	case json.Number:
		f, err := n.Float64()
		if err == nil {
			return f
		}
	}
	r.fail(path, "a number", v)
	return 0
}
