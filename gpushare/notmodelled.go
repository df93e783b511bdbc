package gpushare

import "fmt"

// Features of HAMi's decision that gpushare does not model. Where one
// would decide, Fit refuses with a *NotModelledError rather than give an
// answer HAMi might not give.
const (
	// FeatureDynamicMIG: a node ranked at or before the one Fit would
	// choose has a usable GPU in MIG mode, which HAMi v2.10 may choose
	// (AddResourceUsage, selectMigCandidate in pkg/device/nvidia/device.go)
	// and gpushare never places on.
	FeatureDynamicMIG = "dynamic MIG"
	// FeatureTopologyAware: the topology-aware GPU policy, where more GPUs
	// fit a container than it asks (HAMi then picks by the NVLink pair
	// scores of hami.io/node-nvidia-score: computeWorstSingleCard,
	// computeBestCombination), or together with a namespace quota (HAMi's
	// fitQuota then counts every fitting GPU collected).
	FeatureTopologyAware = "topology-aware GPU policy"
)

// NotModelledError reports a pod whose placement HAMi decides by a part
// of its procedure gpushare does not model. It wraps ErrNotModelled.
type NotModelledError struct {
	// Pod is "namespace/name".
	Pod string
	// Feature is one of the Feature constants.
	Feature string
	// Node is the node where it would decide; empty when it is not one
	// node.
	Node string
	// Detail says why, in a few words.
	Detail string
}

// Error reads "pod ns/p: HAMi would decide by its topology-aware GPU
// policy on node-1 (3 GPUs fit, 2 asked), which gpushare does not model".
func (e *NotModelledError) Error() string {
	where := ""
	if e.Node != "" {
		where = " on " + e.Node
	}
	return fmt.Sprintf("pod %s: HAMi would decide by its %s%s (%s), which gpushare does not model", e.Pod, e.Feature, where, e.Detail)
}

// Unwrap returns ErrNotModelled.
func (e *NotModelledError) Unwrap() error { return ErrNotModelled }
