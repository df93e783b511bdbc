package cozystack

import (
	"context"
	"fmt"

	"github.com/cozystack/tenantkit/gpushare"
	"github.com/cozystack/tenantkit/gpushare/live"
	"github.com/cozystack/tenantkit/tenant"
)

// HAMiSettings reads the HAMi settings of the cluster's hami addon
// (gpushare.ParseHAMiValues of addons.hami.valuesOverride); HAMi's chart
// defaults where nothing is set.
func (cl *Cluster) HAMiSettings(ctx context.Context) (gpushare.HAMiSettings, error) {
	k, err := cl.Kubernetes(ctx)
	if err != nil {
		return gpushare.HAMiSettings{}, err
	}
	s, err := gpushare.ParseHAMiValues(k.Spec.Addons.HAMi.ValuesOverride)
	if err != nil {
		return gpushare.HAMiSettings{}, fmt.Errorf("addons.hami of %s: %w", cl.ref, err)
	}
	return s, nil
}

// EnableHAMi turns on the cluster's GPU Operator and HAMi addons, with s as
// HAMi's values (gpushare.HAMiSettings.Values replaces
// addons.hami.valuesOverride), and applies the application; the rest of the
// spec is kept.
func (cl *Cluster) EnableHAMi(ctx context.Context, s gpushare.HAMiSettings) (*tenant.Kubernetes, error) {
	values, err := s.Values()
	if err != nil {
		return nil, err
	}
	k, err := cl.Kubernetes(ctx)
	if err != nil {
		return nil, err
	}
	k.Spec.Addons.GPUOperator.Enabled = true
	k.Spec.Addons.HAMi = tenant.Addon{Enabled: true, ValuesOverride: values}
	return cl.c.ApplyKubernetes(ctx, k)
}

// GPULedger returns a gpushare ledger of the tenant cluster's GPUs, kept
// current through informers until ctx ends (cancel ctx to stop them). It
// reads the cluster's HAMi settings, fills in the fields cfg leaves zero
// from them, waits for the admin kubeconfig, and returns once the ledger
// has synced. cfg.Logger defaults to the handle's. A cluster whose HAMi
// addon is off gets a ledger all the same: its nodes simply register no
// GPUs.
func (cl *Cluster) GPULedger(ctx context.Context, cfg gpushare.Config) (*gpushare.Ledger, error) {
	settings, err := cl.HAMiSettings(ctx)
	if err != nil {
		return nil, err
	}
	fromApp, err := settings.Config()
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
	l, err := gpushare.NewLedger(cfg)
	if err != nil {
		return nil, err
	}
	if err := live.Watch(ctx, cs, l); err != nil {
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
	cfg.SkipWebhook = cfg.SkipWebhook || def.SkipWebhook
	return cfg
}
