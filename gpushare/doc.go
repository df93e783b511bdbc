// Package gpushare does fractional GPU accounting compatible with HAMi
// (chart 2.9/2.10, the GPU sharing addon of Cozystack's tenant clusters):
// it reads HAMi's node and pod annotations, keeps a ledger of what is
// registered, allocated and free per GPU, node and namespace, and answers
// whether and where a new pod fits, and why not, with HAMi's own rules.
// NVML discovery lives in the subpackage discovery; fixtures for tests in
// gpusharetest.
//
// # The model
//
// HAMi keeps no state of its own. Its device plugin registers each GPU in
// the node annotation hami.io/node-nvidia-register (UUID, slots =
// deviceSplitCount, memory in MiB, cores = 100 per card), and its scheduler
// writes each decision into the pod annotation hami.io/vgpu-devices-allocated
// ("UUID,NVIDIA,MiB,cores:" per GPU, ";" after each container). Usage is the
// sum of the allocations of pods that name a node and are neither Succeeded
// nor Failed. A Ledger rebuilds exactly that from Node and Pod objects:
//
//	l, err := gpushare.NewLedger(gpushare.Config{}) // HAMi's chart defaults
//	err = l.Start(ctx, clientset)                    // informers; returns once synced
//	for _, n := range l.Nodes() {
//		for _, g := range n.GPUs {
//			fmt.Println(n.Name, g.ID, g.Used.MemoryMiB, "of", g.Capacity.MemoryMiB, "MiB")
//		}
//	}
//
// Load, SetNode, SetPod and the Delete methods feed a ledger without a
// cluster. Every annotation has a codec (DecodeNodeDevices and
// EncodeNodeDevices in all three formats HAMi has written,
// DecodePodDevices and EncodePodDevices, DecodeHandshake, DecodeCordon,
// ParseBindPhase, DecodeSelectors); encoders write HAMi's bytes exactly.
//
// # Fitting a pod
//
// NewPodRequest reads what a pod asks for the way HAMi's webhook and
// scheduler do (count-only means the whole card and, since v2.7, 100 cores;
// gpumem wins over gpumem-percentage; defaults from Config). Fit places it
// as HAMi's Filter would: for each node it checks every GPU in HAMi's order
// (health, cordon, type and mode selectors, NUMA binding, UUID selectors,
// slots, the mutex policy, memory, cores, the exclusive-card rule, the
// saturated-card rule), orders GPUs by the GPU policy (spread takes the
// emptiest, binpack the fullest; since v2.10 a comma chain of binpack,
// spread, numa and the filters mutex and topology-aware), never takes a GPU
// twice for one container, and chooses the node by the node policy (binpack
// the fullest, spread the emptiest). Pod annotations override the default
// policies.
//
//	req, err := gpushare.NewPodRequest(pod, l.Config())
//	placement, err := l.Fit(req)      // or Place to allocate at once
//	pod.Annotations = placement.Annotations(time.Now())
//
// When no node fits, the *FitError says why per node and per GPU:
// "node-3: GPU-1a2b: 2048 MiB free < 3000 requested (container main: 0 of 1
// GPUs fit)". WhatIf counts how many more pods of one shape fit and how
// much free memory they would strand.
//
// # Where gpushare differs from HAMi, on purpose
//
//   - Ties: HAMi's node order among equal scores is not deterministic;
//     gpushare takes names in order, and GPUs by lower NUMA node, then lower
//     index.
//   - Invalid requests: where HAMi silently ignores a container's GPU
//     request (gpumem that is not a whole number) or silently falls back
//     (unknown policy names), NewPodRequest returns a *RequestError.
//   - Not modelled: namespace ResourceQuota limits, topology-aware pair
//     scores (the policy orders as spread), dynamic MIG placement
//     (MIG-mode GPUs are counted but never chosen; reason
//     CardMigUnsupported), and kube-scheduler's own predicates that run
//     before HAMi's extender (taints, affinity, CPU and memory, allocatable
//     nvidia.com/gpu, node handshake health): Fit answers HAMi's part of
//     the decision.
//   - GPU scores use existing usage only, as HAMi v2.9+ effectively does for
//     NVIDIA (see DeviceScore).
//   - Counting: the zero Config counts every allocation entry, as HAMi v2.9
//     (Cozystack's chart) does; Config.CollapseInitContainers counts as
//     v2.10.
//
// # Errors
//
// Decoders return *AnnotationError (errors.Is ErrMalformedAnnotation) naming
// the annotation; requests *RequestError (ErrInvalidRequest) naming the
// container and resource; Fit *FitError (ErrNoFit). Allocate refuses with
// ErrOverAllocation, ErrPodExists, ErrUnknownNode or ErrUnknownGPU and
// changes nothing: allocations the ledger makes never exceed a GPU's
// memory, cores or slots. Objects that do not decode are left out, as HAMi
// leaves them out, and listed by Problems. Settings out of range wrap
// ErrInvalidConfig.
//
// # Addon values
//
// Addons renders the addons block of a Cozystack Kubernetes application
// (gpuOperator, hami with its values under hami:), refusing HAMi without
// the GPU Operator as the chart does. ImageIsolation and GlibcIsolation say
// how much of HAMi's limits hold in a workload image.
//
// # Testing
//
// Package gpusharetest builds the Node and Pod objects HAMi leaves behind
// and whole synthetic clusters. Tests of this package use a real
// kube-apiserver (internal/localenv) for the informer path; they are skipped
// with -short. The property test runs a million random operations; the
// benchmarks (make bench) build a 5,000-node, 100,000-pod ledger and place
// pods on it, against same-process baselines.
package gpushare
