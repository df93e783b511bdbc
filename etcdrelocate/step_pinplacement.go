package etcdrelocate

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// pinPlacementStep requires the target node in the EtcdCluster's affinity.
type pinPlacementStep struct{}

// Info declares the step.
func (pinPlacementStep) Info() stepInfo {
	return stepInfo{kind: StepPinPlacement, does: "v1alpha2: require the target node in the EtcdCluster's affinity", effect: effectNone, rollsBack: false}
}

// Text is the step in p's words.
func (pinPlacementStep) Text(p *Plan) (stepText, bool) {
	return stepText{fmt.Sprintf("add a required node affinity for %s to EtcdCluster %s (restored afterwards)", p.TargetNode, p.Cluster),
		"the EtcdCluster is not progressing", "the operator has adopted the spec"}, p.operatorSteps()
}

func (pinPlacementStep) Run(ctx context.Context, x *run) (string, bool, error) {
	if x.cp.PinnedPlacement {
		if err := waitSpecAffinityAdopted(ctx, x.r.cfg.Dynamic, x.p.Namespace, x.p.Cluster, x.r.t.Membership); err != nil {
			return "", false, err
		}
		return "pinned earlier", true, nil
	}
	d, err := dyn(x)
	if err != nil {
		return "", false, err
	}
	clusters := d.Resource(gvrEtcdCluster).Namespace(x.p.Namespace)
	ec, err := clusters.Get(ctx, x.p.Cluster, metav1.GetOptions{})
	if err != nil {
		return "", false, fmt.Errorf("get etcdcluster: %w", err)
	}
	orig, found, _ := unstructured.NestedMap(ec.Object, "spec", "affinity")
	if found {
		data, err := json.Marshal(orig)
		if err != nil {
			return "", false, err
		}
		x.cp.OriginalAffinity = string(data)
	}
	x.cp.PinnedPlacement = true
	if err := x.saveCheckpoint(ctx); err != nil {
		return "", false, err
	}
	aff := map[string]any{}
	for k, v := range orig {
		aff[k] = v
	}
	aff["nodeAffinity"] = map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{
		"nodeSelectorTerms": []any{map[string]any{"matchExpressions": []any{map[string]any{
			"key": corev1.LabelHostname, "operator": "In", "values": []any{x.p.TargetNode}}}}}}}
	if err := setAffinity(ctx, x, clusters, aff); err != nil {
		return "", false, err
	}
	if err := waitPinAdopted(ctx, d, x.p.Namespace, x.p.Cluster, aff, x.r.t.Membership); err != nil {
		return "", false, err
	}
	return "new members of " + x.p.Cluster + " must run on " + x.p.TargetNode, false, nil
}
