// Package gpushare does fractional GPU accounting compatible with HAMi
// (chart 2.9/2.10, the GPU sharing addon of Cozystack's tenant clusters):
// it reads HAMi's node and pod annotations, keeps a ledger of what is
// registered, allocated and free per GPU, node and namespace, and answers
// whether and where a new pod fits, and why not, deciding as HAMi v2.10's
// scheduler does. It is pure computation over k8s.io/api objects: no
// client, no I/O. Package live keeps a ledger current from a cluster;
// package discovery registers a machine's GPUs through NVML; package
// gpusharetest builds fixtures.
//
// # The flow
//
// Decode. HAMi keeps no state of its own. Its device plugin registers each
// GPU in the node annotation hami.io/node-nvidia-register (UUID, slots =
// deviceSplitCount, memory in MiB, cores = 100 per card), and its scheduler
// writes each decision into the pod annotation hami.io/vgpu-devices-allocated
// ("UUID,NVIDIA,MiB,cores:" per GPU, ";" after each container). Every
// annotation has a codec: DecodeNodeDevices and EncodeNodeDevices (all
// three formats HAMi has written), DecodePodDevices and EncodePodDevices,
// DecodeHandshake, DecodeCordon, ParseBindPhase, DecodeSelectors. Encoders
// write HAMi's bytes exactly.
//
// Account. A Ledger rebuilds HAMi's usage from Node and Pod objects: the sum
// of the allocations of pods that name a node and have not finished. Load
// takes many objects at once; SetNode, SetPod, DeleteNode and DeletePod
// follow changes, SetResourceQuota and DeleteResourceQuota a namespace's
// quota on GPU memory and cores as HAMi v2.10's QuotaManager keeps it, and
// Fit refuses a pod over it (live.Watch calls them from informers). Nodes, Node,
// Namespaces and Summary read it; Problems lists every object left out,
// wholly or in part, with a typed DropReason.
//
//	l, err := gpushare.NewLedger(gpushare.Config{}) // HAMi's chart defaults
//	err = l.Load(nodes, pods)
//	n, _ := l.Node("gpu-1") // per GPU: Capacity, Used, Free
//
// Fit. NewPodRequest reads what a pod asks for the way HAMi's admission
// webhook and scheduler do: a pod the webhook refuses is a *WebhookError,
// never a request (Config.SkipWebhook reads pods as the scheduler alone
// sees them); odd values are bent as HAMi bends them and listed in
// PodRequest.Warnings (Config.StrictRequests refuses them). Fit places it
// as HAMi's Filter would and returns the Placement: the node, the node's
// score, the GPU policy (binpack or spread, per node and per GPU), and each
// container's GPU shares, which Annotations writes as HAMi does. Place fits
// and allocates at once; a scheduler extender that decides in one call and
// commits in another uses Fit, then Allocate, which applies every per-GPU
// rule again against the ledger as it is then (see the Allocate example).
//
// Explain. When no node fits, the *FitError says first what blocks the pod
// over all nodes (Blocker, with a Kind to branch on: "no GPU has 3000 MiB
// free (largest: 2048)"), then why per node and per GPU in HAMi's words:
// "node-3: GPU-1a2b: 2048 MiB free < 3000 requested (container main: 0 of
// 1 GPUs fit)". WhatIf counts how many more pods of one shape fit and how
// much free memory they would strand.
//
// # Guarantees
//
//   - HAMi-compatible: requests, usage, GPU and node scores, GPU order, the
//     per-GPU checks and the allocation bytes follow HAMi v2.10.0's source;
//     differential tests against an independent model of it agree on every
//     decision (docs/gpushare.md lists what is mirrored, where, and the
//     measurements). The zero Config is HAMi v2.9's chart, the version
//     Cozystack ships; Config.CollapseInitContainers switches init
//     container accounting to v2.10.
//   - Allocations the ledger makes (Allocate, Place) never exceed a GPU's
//     memory, cores or slots and never break a sharing rule; a refused
//     Allocate changes nothing.
//   - Nothing is dropped silently: what HAMi skips, the ledger lists in
//     Problems; what HAMi bends, NewPodRequest lists in Warnings; what
//     HAMi's webhook refuses, NewPodRequest refuses, so it never fits.
//   - A Ledger is safe for concurrent use.
//
// Where gpushare differs from HAMi on purpose: among nodes of equal score
// it takes names in order (HAMi's choice is not determined); Allocate
// re-checks a placement HAMi would commit unchecked; unknown policy names
// in a pod's annotations are refused (HAMi falls back). It does not model
// HAMi's admission-time quota check, topology-aware pair scores or dynamic
// MIG placement (MIG-mode GPUs are counted, never chosen; where either
// would decide, Fit refuses with a *NotModelledError), or the predicates
// kube-scheduler runs before HAMi's extender (taints, affinity, CPU and
// memory): Fit answers HAMi's part of the decision. docs/gpushare.md has
// the full list.
//
// # Errors
//
// Sentinels start with "gpushare: ". Decoders return *AnnotationError
// (errors.Is ErrMalformedAnnotation) naming the annotation; requests
// *RequestError (ErrInvalidRequest) naming the container and resource, or
// *WebhookError (ErrWebhookRefused) in HAMi's webhook's words; Fit
// *FitError (ErrNoFit), or *NotModelledError (ErrNotModelled). Allocate refuses with *AllocationError (wrapping
// ErrOverAllocation when a GPU lacks room, ErrGPUConflict when a sharing
// rule is broken), ErrPodExists, ErrUnknownNode or ErrUnknownGPU. Objects
// left out are *ObjectError in Problems. Settings out of range wrap
// ErrInvalidConfig.
//
// # Addon values
//
// HAMiSettings is the one owner of the HAMi addon's values in a Cozystack
// Kubernetes application (addons.hami.valuesOverride.hami):
// ParseHAMiValues reads them, Values writes them with every default spelled
// out, Config turns them into this package's Config. The addons block
// itself, and the chart's refusal of HAMi without the GPU Operator, are
// package tenant's. ImageIsolation and GlibcIsolation say how much of
// HAMi's limits hold in a workload image.
package gpushare
