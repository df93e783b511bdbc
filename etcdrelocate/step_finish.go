package etcdrelocate

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// finishStep deletes the checkpoint.
type finishStep struct{}

// Info declares the step.
func (finishStep) Info() stepInfo {
	return stepInfo{kind: StepFinish, does: "delete the checkpoint ConfigMap", effect: effectNone, rollsBack: false}
}

// Text is the step in p's words.
func (finishStep) Text(p *Plan) (stepText, bool) {
	return stepText{"delete ConfigMap " + p.checkpointRef(), "verify passed", "the ConfigMap is gone"}, true
}

// Run deletes the checkpoint (conditional on the resourceVersion this
// run wrote last).
func (finishStep) Run(ctx context.Context, x *run) (string, bool, error) {
	var pre *metav1.Preconditions
	if x.cpCM != nil {
		rv := x.cpCM.ResourceVersion
		pre = &metav1.Preconditions{ResourceVersion: &rv}
	}
	err := x.r.cfg.Kube.CoreV1().ConfigMaps(x.p.Namespace).Delete(ctx, checkpointName(x.p.Cluster), metav1.DeleteOptions{Preconditions: pre})
	if apierrors.IsNotFound(err) {
		return "no checkpoint left", true, nil
	}
	if apierrors.IsConflict(err) {
		return "", false, fmt.Errorf("%w: checkpoint %s/%s was changed by someone else; not deleting it", ErrLeaseLost, x.p.Namespace, checkpointName(x.p.Cluster))
	}
	if err != nil {
		return "", false, fmt.Errorf("delete checkpoint: %w", err)
	}
	return "checkpoint deleted", false, nil
}
