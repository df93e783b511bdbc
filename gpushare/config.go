package gpushare

import (
	"fmt"
	"log/slog"
)

// ResourceNames are the extended resource names HAMi is configured with.
// Empty fields take HAMi's defaults (nvidia.com/gpu, nvidia.com/gpumem,
// nvidia.com/gpumem-percentage, nvidia.com/gpucores).
type ResourceNames struct {
	// GPU counts GPUs (nvidia.com/gpu).
	GPU string
	// Memory is MiB per GPU (nvidia.com/gpumem).
	Memory string
	// MemoryPercentage is percent of each GPU's memory
	// (nvidia.com/gpumem-percentage).
	MemoryPercentage string
	// Cores is percent of each GPU's compute (nvidia.com/gpucores).
	Cores string
}

// Config mirrors the HAMi settings that decide requests, placement and
// accounting. Its zero value is HAMi v2.9's chart defaults, the version
// Cozystack ships: the admission webhook in the path (its refusals and
// defaults applied), defaultMemory 0 (a bare
// nvidia.com/gpu takes the whole card), defaultCores 0, defaultGPUNum 1,
// memoryFactor 1, node binpack and GPU spread, every allocation entry
// counted.
type Config struct {
	// Resources are the resource names; zero fields take the defaults.
	Resources ResourceNames

	// DefaultMemoryMiB is HAMi's defaultMemory: the MiB a container that
	// names neither gpumem nor gpumem-percentage gets. 0 means 100 % of the
	// card.
	DefaultMemoryMiB int32
	// DefaultCores is HAMi's defaultCores: the cores of a container without
	// gpucores (before the webhook's exclusive default).
	DefaultCores int32
	// DefaultGPUNum is HAMi's defaultGPUNum, the nvidia.com/gpu the webhook
	// adds to a container that asks for memory or cores only. 0 means 1.
	DefaultGPUNum int32
	// MemoryFactor is HAMi's memoryFactor: gpumem is multiplied by it.
	// 0 means 1.
	MemoryFactor int32
	// SkipWebhook reads pod specs as HAMi's scheduler sees pods that
	// bypassed its admission webhook (scheduler.admissionWebhook.enabled
	// false, or a namespace labelled hami.io/webhook: ignore): nothing is
	// refused for the webhook's reasons, there is no defaultGPUNum, and no
	// gpucores 100 for containers that take a whole card's memory (the
	// v2.7+ exclusive default). False (the default) is what Cozystack
	// deploys: the webhook in the path, its refusals and defaults applied.
	SkipWebhook bool
	// StrictRequests makes NewPodRequest refuse, with a *RequestError, a
	// pod whose resources HAMi's scheduler would bend: a percentage or
	// cores over 100 (HAMi clamps), a gpumem or GPU count it ignores. False
	// (the default) derives what HAMi derives and lists the oddity in
	// PodRequest.Warnings.
	StrictRequests bool

	// NodePolicy is the default node policy ("" means HAMi's default,
	// binpack).
	NodePolicy NodePolicy
	// GPUPolicy is the default GPU policy ("" means HAMi's default,
	// spread).
	GPUPolicy GPUPolicy

	// CollapseInitContainers counts usage and fits init containers as HAMi
	// v2.10 does: per pod and GPU, the larger of the biggest init container
	// and the sum of the app containers, shrinking to app containers once
	// all init containers succeeded; and when fitting, each init container
	// on the node as it is, apart from the others. False counts every
	// allocation entry and fits init containers in sequence with the app
	// containers, as HAMi v2.9 and earlier count.
	CollapseInitContainers bool

	// Logger receives debug logs of the ledger; nil discards them.
	Logger *slog.Logger
}

// withDefaults checks c and fills in its defaults.
func (c Config) withDefaults() (Config, error) {
	r := &c.Resources
	if r.GPU == "" {
		r.GPU = ResourceGPU
	}
	if r.Memory == "" {
		r.Memory = ResourceMemory
	}
	if r.MemoryPercentage == "" {
		r.MemoryPercentage = ResourceMemoryPercentage
	}
	if r.Cores == "" {
		r.Cores = ResourceCores
	}
	if c.DefaultGPUNum == 0 {
		c.DefaultGPUNum = defaultGPUNum
	}
	if c.MemoryFactor == 0 {
		c.MemoryFactor = defaultMemoryFactor
	}
	if c.NodePolicy == "" {
		c.NodePolicy = defaultNodePolicy
	}
	if c.GPUPolicy == "" {
		c.GPUPolicy = defaultGPUPolicy
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	switch {
	case c.DefaultMemoryMiB < 0, c.DefaultCores < 0, c.DefaultCores > 100, c.DefaultGPUNum < 0, c.MemoryFactor < 0:
		return c, fmt.Errorf("%w: negative default, or defaultCores over 100", ErrInvalidConfig)
	}
	if _, err := ParseNodePolicy(string(c.NodePolicy)); err != nil {
		return c, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	if _, err := compileGPUPolicy(c.GPUPolicy); err != nil {
		return c, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	return c, nil
}
