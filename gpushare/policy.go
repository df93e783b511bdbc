package gpushare

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// NodePolicy chooses among the nodes a pod fits on.
type NodePolicy string

const (
	// NodeBinpack takes the fullest node (HAMi's default).
	NodeBinpack NodePolicy = "binpack"
	// NodeSpread takes the emptiest node.
	NodeSpread NodePolicy = "spread"
)

// ParseNodePolicy checks a node policy name. HAMi silently treats unknown
// names as spread (HAMi#1931); gpushare reports them as an error wrapping
// ErrInvalidRequest instead.
func ParseNodePolicy(s string) (NodePolicy, error) {
	switch p := NodePolicy(strings.TrimSpace(s)); p {
	case NodeBinpack, NodeSpread:
		return p, nil
	}
	return "", &RequestError{Resource: AnnotationNodePolicy,
		Reason: fmt.Sprintf("unknown node policy %q, want binpack or spread (HAMi would silently use spread)", s)}
}

// GPUPolicy orders the GPUs of a node for a container: one name or, since
// HAMi v2.10, an ordered comma chain such as "mutex,binpack,numa".
type GPUPolicy string

// GPU policy names.
const (
	// GPUSpread prefers the emptiest GPU (HAMi's default).
	GPUSpread GPUPolicy = "spread"
	// GPUBinpack prefers the fullest GPU.
	GPUBinpack GPUPolicy = "binpack"
	// GPUNUMA orders GPUs by NUMA node (a sort key, v2.10): as HAMi walks
	// its ascending list from the end, the highest NUMA node comes first.
	GPUNUMA GPUPolicy = "numa"
	// GPUMutex only takes idle GPUs (a filter, v2.10).
	GPUMutex GPUPolicy = "mutex"
	// GPUTopologyAware picks GPUs by NVLink pair scores. gpushare accepts
	// the name and orders as spread, and Fit refuses (*NotModelledError)
	// where HAMi would pick by pair scores.
	GPUTopologyAware GPUPolicy = "topology-aware"
)

type sortKey uint8

const (
	keySpread sortKey = iota
	keyBinpack
	keyNUMA
)

// singleOrder is how HAMi orders GPUs under a policy that is one name.
type singleOrder uint8

const (
	orderSpread singleOrder = iota
	orderBinpack
	orderMutex
)

// gpuPolicy is a parsed GPUPolicy in the shape of HAMi v2.10's
// DeviceUsageList.Less (pkg/scheduler/policy/gpu_policy.go): a comma chain,
// or the bare name numa, compares by its sort keys and then by index; a
// single name keeps the older branches (spread, binpack, mutex) that break
// no ties beyond the NUMA node.
type gpuPolicy struct {
	chain  bool
	keys   []sortKey // chain: as written, each once; spread when none
	single singleOrder
	mutex  bool // contains mutex: only idle GPUs
	// topology: contains topology-aware; Fit refuses where HAMi would
	// pick by pair scores (see FeatureTopologyAware).
	topology bool
}

// ParseGPUPolicy checks a GPU policy or policy chain. Sort keys (binpack,
// spread, numa) apply in the order written; mutex and topology-aware are
// filters; a chain without a sort key orders as spread. Unknown names give
// an error wrapping ErrInvalidRequest (HAMi would silently use spread).
func ParseGPUPolicy(s string) (GPUPolicy, error) {
	if _, err := compileGPUPolicy(GPUPolicy(s)); err != nil {
		return "", err
	}
	return GPUPolicy(strings.TrimSpace(s)), nil
}

func compileGPUPolicy(p GPUPolicy) (gpuPolicy, error) {
	trimmed := strings.TrimSpace(string(p))
	out := gpuPolicy{chain: strings.Contains(trimmed, ",") || trimmed == string(GPUNUMA)}
	for raw := range strings.SplitSeq(trimmed, ",") {
		var k sortKey
		switch GPUPolicy(strings.TrimSpace(raw)) {
		case GPUSpread:
			k = keySpread
		case GPUBinpack:
			k = keyBinpack
			if !out.chain {
				out.single = orderBinpack
			}
		case GPUNUMA:
			k = keyNUMA
		case GPUMutex:
			out.mutex = true
			if !out.chain {
				out.single = orderMutex
			}
			continue
		case GPUTopologyAware:
			out.topology = true
			continue
		default:
			return gpuPolicy{}, &RequestError{Resource: AnnotationGPUPolicy,
				Reason: fmt.Sprintf("unknown GPU policy %q in %q, want binpack, spread, numa, mutex or topology-aware (HAMi would silently use spread)", strings.TrimSpace(raw), p)}
		}
		if out.chain && !slices.Contains(out.keys, k) {
			out.keys = append(out.keys, k)
		}
	}
	if out.chain && len(out.keys) == 0 {
		out.keys = []sortKey{keySpread}
	}
	return out, nil
}

// withNUMAFirst is the chain's keys under numa-bind: numa moved first, as
// HAMi's lessByChain does, so NUMA groups stay together.
func (g *gpuPolicy) withNUMAFirst() []sortKey {
	if !g.chain || g.keys[0] == keyNUMA {
		return g.keys
	}
	out := []sortKey{keyNUMA}
	for _, k := range g.keys {
		if k != keyNUMA {
			out = append(out, k)
		}
	}
	return out
}

// Weights weigh the slot, core and memory terms of a GPU's score.
type Weights struct {
	// Slot, Core and Memory weigh the slot, core and memory terms.
	Slot, Core, Memory int32
}

// DefaultWeights returns HAMi's default scoring weights, 1,1,1.
func DefaultWeights() Weights { return Weights{Slot: 1, Core: 1, Memory: 1} }

// ParseWeights decodes hami.io/device-scoring-weights: exactly the keys
// slot, core and memory, each once, with non-negative integer values, at
// least one positive, e.g. "slot=1,core=2,memory=1". Errors wrap
// ErrInvalidRequest.
func ParseWeights(s string) (Weights, error) {
	bad := func(why string) (Weights, error) {
		return Weights{}, &RequestError{Resource: AnnotationScoringWeights, Reason: fmt.Sprintf("%q: %s", s, why)}
	}
	var (
		w    Weights
		seen = map[string]bool{}
	)
	parts := strings.Split(s, ",")
	if len(parts) != 3 {
		return bad("want slot=a,core=b,memory=c")
	}
	for _, part := range parts {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return bad("want slot=a,core=b,memory=c")
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
		if err != nil || n < 0 {
			return bad(fmt.Sprintf("weight %q is not a non-negative integer", v))
		}
		k = strings.TrimSpace(k)
		if seen[k] {
			return bad("key " + k + " twice")
		}
		seen[k] = true
		switch k {
		case "slot":
			w.Slot = int32(n)
		case "core":
			w.Core = int32(n)
		case "memory":
			w.Memory = int32(n)
		default:
			return bad("unknown key " + strconv.Quote(k))
		}
	}
	if w.Slot+w.Core+w.Memory == 0 {
		return bad("at least one weight must be positive")
	}
	return w, nil
}

// String writes w in the annotation's format.
func (w Weights) String() string {
	return fmt.Sprintf("slot=%d,core=%d,memory=%d", w.Slot, w.Core, w.Memory)
}
