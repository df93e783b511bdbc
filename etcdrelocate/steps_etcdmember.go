package etcdrelocate

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// The v1alpha2 steps go through the operator: it owns membership, so the
// plan deletes the EtcdMember (its finalizer runs MemberRemove) and waits
// for the operator's replacement, steered to the target by a temporary
// required node affinity on the EtcdCluster.

func normalizeJSON(v any) any {
	data, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(data, &out)
	return out
}

func dyn(x *run) (dynamic.Interface, error) {
	if x.r.cfg.Dynamic == nil {
		return nil, fmt.Errorf("%w: Config.Dynamic is required for the %s layout", ErrInvalidConfig, x.p.Layout)
	}
	return x.r.cfg.Dynamic, nil
}

// setAffinity replaces spec.affinity (nil removes it).
func setAffinity(ctx context.Context, x *run, clusters dynamic.ResourceInterface, aff map[string]any) error {
	op := []map[string]any{{"op": "add", "path": "/spec/affinity", "value": aff}}
	if aff == nil {
		op = []map[string]any{{"op": "remove", "path": "/spec/affinity"}}
	}
	patch, err := json.Marshal(op)
	if err != nil {
		return err
	}
	_, err = clusters.Patch(ctx, x.p.Cluster, types.JSONPatchType, patch, metav1.PatchOptions{})
	if err != nil && !(aff == nil && apierrors.IsInvalid(err)) {
		return fmt.Errorf("patch etcdcluster affinity: %w", err)
	}
	ec, err := clusters.Get(ctx, x.p.Cluster, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get etcdcluster: %w", err)
	}
	got, _, _ := unstructured.NestedMap(ec.Object, "spec", "affinity")
	if len(got) == 0 && len(aff) == 0 {
		return nil
	}
	if !reflect.DeepEqual(normalizeJSON(got), normalizeJSON(aff)) {
		return fmt.Errorf("etcdcluster affinity did not take: %v", got)
	}
	return nil
}

// pdbAllows waits until the members' PodDisruptionBudget allows a
// disruption.
func pdbAllows(ctx context.Context, x *run) error {
	return x.stall.retry(ctx, x.r.t.Membership, "the PodDisruptionBudget to allow a disruption", func(ctx context.Context) (bool, error) {
		kv := &kubeView{etcdMembers: map[string]string{}}
		found, err := x.r.observeV1alpha2(ctx, x.p.Namespace, x.p.Cluster, kv)
		if err != nil {
			return false, keepTrying{fmt.Errorf("observe the cluster: %w", err)}
		}
		if !found {
			return false, keepTrying{fmt.Errorf("%w: EtcdCluster %s not found", ErrUnexpectedMember, x.p.Cluster)}
		}
		if err := x.r.observePDB(ctx, x.p.Namespace, x.p.Cluster, kv); err != nil {
			return false, keepTrying{err}
		}
		if kv.pdb != nil && kv.pdb.DisruptionsAllowed < 1 {
			return false, keepTrying{fmt.Errorf("%w: %s allows no disruption", ErrDisruptionNotAllowed, kv.pdb.Name)}
		}
		return true, nil
	})
}

// replacementPod returns the pod serving the member's peer URL.
func replacementPod(ctx context.Context, x *run, peerURL string) (*corev1.Pod, error) {
	kv := &kubeView{etcdMembers: map[string]string{}}
	if _, err := x.r.observeV1alpha2(ctx, x.p.Namespace, x.p.Cluster, kv); err != nil {
		return nil, err
	}
	for i := range kv.pods {
		if sameURL(expectedPeerURL(&kv.pods[i], kv.service), peerURL) {
			return &kv.pods[i], nil
		}
	}
	return nil, nil
}
