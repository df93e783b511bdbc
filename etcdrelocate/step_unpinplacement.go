package etcdrelocate

import (
	"context"
	"encoding/json"
	"fmt"
)

// unpinPlacementStep restores the EtcdCluster's own affinity.
type unpinPlacementStep struct{}

// Info declares the step.
func (unpinPlacementStep) Info() stepInfo {
	return stepInfo{kind: StepUnpinPlacement, does: "v1alpha2: restore the EtcdCluster's own affinity", effect: effectNone, rollsBack: false}
}

// Text is the step in p's words.
func (unpinPlacementStep) Text(p *Plan) (stepText, bool) {
	return stepText{"restore EtcdCluster " + p.Cluster + "'s own affinity", "none", "the spec affinity equals the recorded original"}, p.operatorSteps()
}

func (unpinPlacementStep) Run(ctx context.Context, x *run) (string, bool, error) {
	if x.cp == nil || !x.cp.PinnedPlacement {
		return "nothing pinned", true, nil
	}
	d, err := dyn(x)
	if err != nil {
		return "", false, err
	}
	var orig map[string]any
	if x.cp.OriginalAffinity != "" {
		if err := json.Unmarshal([]byte(x.cp.OriginalAffinity), &orig); err != nil {
			return "", false, fmt.Errorf("%w: original affinity: %w", ErrInvalidCheckpoint, err)
		}
	}
	if err := setAffinity(ctx, x, d.Resource(gvrEtcdCluster).Namespace(x.p.Namespace), orig); err != nil {
		return "", false, err
	}
	if err := waitPinAdopted(ctx, d, x.p.Namespace, x.p.Cluster, orig, x.r.t.Membership); err != nil {
		return "", false, err
	}
	x.cp.PinnedPlacement = false
	if err := x.saveCheckpoint(ctx); err != nil {
		return "", false, err
	}
	return "restored the EtcdCluster's affinity", false, nil
}
