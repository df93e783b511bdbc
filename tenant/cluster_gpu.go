package tenant

import (
	"context"
	"fmt"
	"strings"

	"github.com/cozystack/tenantkit/gpushare"
)

// GPUConfig returns the gpushare configuration that matches the cluster's
// HAMi addon: the resource names (hami.resourceName, resourceMem,
// resourceMemPercentage, resourceCores), the default scheduler policies
// (hami.scheduler.defaultSchedulerPolicy) and whether HAMi's admission
// webhook defaults pods (hami.scheduler.admissionWebhook.enabled), read
// from addons.hami.valuesOverride; HAMi's chart defaults where they are
// not set. A value of the wrong type or an unknown policy wraps
// ErrInvalidValue.
func (k *Kubernetes) GPUConfig() (gpushare.Config, error) {
	hami, _ := k.Spec.Addons.HAMi.ValuesOverride["hami"].(map[string]any)
	var cfg gpushare.Config
	var err error
	str := func(path ...string) string {
		v, ok := lookup(hami, path...)
		s, isStr := v.(string)
		if ok && !isStr && err == nil {
			err = fmt.Errorf("%w: addons.hami.valuesOverride.hami.%s: want a string, got %T", ErrInvalidValue, strings.Join(path, "."), v)
		}
		return s
	}
	cfg.Resources = gpushare.ResourceNames{GPU: str("resourceName"), Memory: str("resourceMem"),
		MemoryPercentage: str("resourceMemPercentage"), Cores: str("resourceCores")}
	node := str("scheduler", "defaultSchedulerPolicy", "nodeSchedulerPolicy")
	gpu := str("scheduler", "defaultSchedulerPolicy", "gpuSchedulerPolicy")
	if v, ok := lookup(hami, "scheduler", "admissionWebhook", "enabled"); ok {
		on, isBool := v.(bool)
		if !isBool && err == nil {
			err = fmt.Errorf("%w: addons.hami.valuesOverride.hami.scheduler.admissionWebhook.enabled: want a bool, got %T", ErrInvalidValue, v)
		}
		cfg.SkipWebhookDefaults = isBool && !on
	}
	if err != nil {
		return gpushare.Config{}, err
	}
	if node != "" {
		if cfg.NodePolicy, err = gpushare.ParseNodePolicy(node); err != nil {
			return gpushare.Config{}, fmt.Errorf("%w: addons.hami: %v", ErrInvalidValue, err)
		}
	}
	if gpu != "" {
		if cfg.GPUPolicy, err = gpushare.ParseGPUPolicy(gpu); err != nil {
			return gpushare.Config{}, fmt.Errorf("%w: addons.hami: %v", ErrInvalidValue, err)
		}
	}
	return cfg, nil
}

// GPULedger returns a gpushare ledger of the tenant cluster's GPUs, kept
// current through informers until ctx ends (cancel ctx to stop them). It
// reads the cluster's HAMi settings (Kubernetes.GPUConfig), fills in the
// fields cfg leaves zero from them, waits for the admin kubeconfig, and
// returns once the ledger has synced. cfg.Logger defaults to the handle's.
// A cluster whose HAMi addon is off gets a ledger all the same: its nodes
// simply register no GPUs.
func (cl *Cluster) GPULedger(ctx context.Context, cfg gpushare.Config) (*gpushare.Ledger, error) {
	k, err := cl.Kubernetes(ctx)
	if err != nil {
		return nil, err
	}
	fromApp, err := k.GPUConfig()
	if err != nil {
		return nil, err
	}
	cfg = mergeGPUConfig(cfg, fromApp)
	if cfg.Logger == nil {
		cfg.Logger = cl.c.log
	}
	cs, err := cl.Clientset(ctx)
	if err != nil {
		return nil, err
	}
	cfg.Client = cs
	l, err := gpushare.NewLedger(cfg)
	if err != nil {
		return nil, err
	}
	if err := l.Start(ctx); err != nil {
		return nil, fmt.Errorf("GPU ledger of %s: %w", cl.ref, err)
	}
	return l, nil
}

// mergeGPUConfig fills the zero fields of cfg from def.
func mergeGPUConfig(cfg, def gpushare.Config) gpushare.Config {
	or := func(a, b string) string {
		if a != "" {
			return a
		}
		return b
	}
	r := &cfg.Resources
	r.GPU = or(r.GPU, def.Resources.GPU)
	r.Memory = or(r.Memory, def.Resources.Memory)
	r.MemoryPercentage = or(r.MemoryPercentage, def.Resources.MemoryPercentage)
	r.Cores = or(r.Cores, def.Resources.Cores)
	cfg.NodePolicy = gpushare.NodePolicy(or(string(cfg.NodePolicy), string(def.NodePolicy)))
	cfg.GPUPolicy = gpushare.GPUPolicy(or(string(cfg.GPUPolicy), string(def.GPUPolicy)))
	cfg.SkipWebhookDefaults = cfg.SkipWebhookDefaults || def.SkipWebhookDefaults
	return cfg
}

// lookup returns the value at path in nested maps.
func lookup(m map[string]any, path ...string) (any, bool) {
	var v any = m
	for _, k := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = mm[k]; !ok {
			return nil, false
		}
	}
	return v, true
}
