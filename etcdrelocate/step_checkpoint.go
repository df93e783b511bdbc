package etcdrelocate

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// checkpointStep records the relocation in the checkpoint ConfigMap, or finds the record of an earlier run of the same plan.
type checkpointStep struct{}

// Info declares the step.
func (checkpointStep) Info() stepInfo {
	return stepInfo{kind: StepCheckpoint, does: "record the relocation (member, pod and claim UIDs, target) in the checkpoint ConfigMap", effect: effectNone, rollsBack: false}
}

// Text is the step in p's words.
func (checkpointStep) Text(p *Plan) (stepText, bool) {
	cm := p.checkpointRef()
	if p.Restore {
		return stepText{fmt.Sprintf("mark the rolled-back checkpoint %s as restoring on %s", cm, p.TargetNode),
			"the checkpoint is rolled back (or restoring on the same node)", "the ConfigMap reads back"}, true
	}
	return stepText{fmt.Sprintf("record member %s, its pod and claim UIDs and the target in ConfigMap %s", FormatID(p.Member.ID), cm),
		"no other relocation recorded", "the ConfigMap reads back"}, true
}

// Run records the plan in the cluster, or finds the record of an
// earlier run of the same plan.
func (checkpointStep) Run(ctx context.Context, x *run) (string, bool, error) {
	if x.p.Restore {
		return restoreCheckpoint(ctx, x)
	}
	cms := x.r.cfg.Kube.CoreV1().ConfigMaps(x.p.Namespace)
	name := checkpointName(x.p.Cluster)
	for attempt := 0; attempt < 3; attempt++ {
		cm, err := cms.Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			cp, err := DecodeCheckpoint([]byte(cm.Data[checkpointKey]))
			if err != nil {
				return "", false, fmt.Errorf("configmap %s: %w", name, err)
			}
			if err := x.ownCheckpoint(cp); err != nil {
				return "", false, err
			}
			x.cp, x.cpCM = cp, cm
			return "checkpoint found; resuming", true, nil
		}
		if !apierrors.IsNotFound(err) {
			return "", false, fmt.Errorf("get checkpoint: %w", err)
		}
		if x.p.Resume {
			return "", false, fmt.Errorf("%w: checkpoint %s/%s is gone: the relocation this plan resumes finished or was cleared; plan again",
				ErrPlanStale, x.p.Namespace, name)
		}
		cp := CheckpointFor(x.p)
		cp.Started = time.Now().UTC().Truncate(time.Second)
		x.cpStamp = cp.Started
		if rev, err := x.revision(ctx); err == nil {
			cp.Revision = rev
		}
		data, err := cp.Encode()
		if err != nil {
			return "", false, err
		}
		created, err := cms.Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app.kubernetes.io/managed-by": "tenantkit-etcdrelocate"}},
			Data:       map[string]string{checkpointKey: string(data)},
		}, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			continue
		}
		if err != nil {
			return "", false, fmt.Errorf("create checkpoint: %w", err)
		}
		x.cp, x.cpCM = cp, created
		return "recorded in ConfigMap " + name, false, nil
	}
	return "", false, fmt.Errorf("%w: create checkpoint %s: lost the race three times", ErrRelocationInProgress, name)
}
