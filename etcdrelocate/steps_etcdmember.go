package etcdrelocate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"

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

func (x *run) dyn() (dynamic.Interface, error) {
	if x.r.cfg.Dynamic == nil {
		return nil, fmt.Errorf("%w: Config.Dynamic is required for the %s layout", ErrInvalidConfig, x.p.Layout)
	}
	return x.r.cfg.Dynamic, nil
}

func (x *run) pinPlacement(ctx context.Context) (string, bool, error) {
	if x.cp.PinnedPlacement {
		if err := waitSpecAffinityAdopted(ctx, x.r.cfg.Dynamic, x.p.Namespace, x.p.Cluster, x.r.t.Membership); err != nil {
			return "", false, err
		}
		return "pinned earlier", true, nil
	}
	d, err := x.dyn()
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
	if err := x.setAffinity(ctx, clusters, aff); err != nil {
		return "", false, err
	}
	if err := waitPinAdopted(ctx, d, x.p.Namespace, x.p.Cluster, aff, x.r.t.Membership); err != nil {
		return "", false, err
	}
	return "new members of " + x.p.Cluster + " must run on " + x.p.TargetNode, false, nil
}

func (x *run) unpinPlacement(ctx context.Context) (string, bool, error) {
	if x.cp == nil || !x.cp.PinnedPlacement {
		return "nothing pinned", true, nil
	}
	d, err := x.dyn()
	if err != nil {
		return "", false, err
	}
	var orig map[string]any
	if x.cp.OriginalAffinity != "" {
		if err := json.Unmarshal([]byte(x.cp.OriginalAffinity), &orig); err != nil {
			return "", false, fmt.Errorf("%w: original affinity: %w", ErrInvalidCheckpoint, err)
		}
	}
	if err := x.setAffinity(ctx, d.Resource(gvrEtcdCluster).Namespace(x.p.Namespace), orig); err != nil {
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

// setAffinity replaces spec.affinity (nil removes it).
func (x *run) setAffinity(ctx context.Context, clusters dynamic.ResourceInterface, aff map[string]any) error {
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

func normalizeJSON(v any) any {
	data, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(data, &out)
	return out
}

func (x *run) deleteEtcdMember(ctx context.Context) (string, bool, error) {
	d, err := x.dyn()
	if err != nil {
		return "", false, err
	}
	members := d.Resource(gvrEtcdMember).Namespace(x.p.Namespace)
	ms, err := x.mem.list(ctx)
	if err != nil {
		return "", false, err
	}
	_, getErr := members.Get(ctx, x.p.Member.EtcdMember, metav1.GetOptions{})
	if !x.oldPresent(ms) && apierrors.IsNotFound(getErr) {
		return "already deleted", true, nil
	}
	if x.oldPresent(ms) {
		if err := x.othersHealthy(ctx); err != nil {
			return "", false, err
		}
		if err := x.pdbAllows(ctx); err != nil {
			return "", false, err
		}
		if _, err := x.mem.moveLeaderAway(ctx, x.p.Member.ID); err != nil {
			return "", false, err
		}
	}
	if _, err := deleteEtcdMemberGuarded(ctx, members, x.p.Namespace, x.p.Member.EtcdMember); err != nil {
		return "", false, err
	}
	err = retry(ctx, x.r.t.Membership+x.r.t.Storage, "the operator to remove the member", func(ctx context.Context) (bool, error) {
		ms, err := x.mem.list(ctx)
		if err != nil {
			return false, err
		}
		if x.oldPresent(ms) {
			return false, keepTrying{errors.New("the member is still in MemberList")}
		}
		if x.res.RemovedAt.IsZero() {
			x.res.RemovedAt = time.Now()
		}
		if _, err := members.Get(ctx, x.p.Member.EtcdMember, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return false, keepTrying{errors.New("the EtcdMember still exists")}
		}
		return true, nil
	})
	if err != nil {
		return "", false, err
	}
	return "EtcdMember " + x.p.Member.EtcdMember + " deleted; the operator removed member " + FormatID(x.p.Member.ID), false, nil
}

// pdbAllows waits until the members' PodDisruptionBudget allows a
// disruption.
func (x *run) pdbAllows(ctx context.Context) error {
	return retry(ctx, x.r.t.Membership, "the PodDisruptionBudget to allow a disruption", func(ctx context.Context) (bool, error) {
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
func (x *run) replacementPod(ctx context.Context, peerURL string) (*corev1.Pod, error) {
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

func (x *run) waitReplacement(ctx context.Context) (string, bool, error) {
	var msg string
	err := retry(ctx, x.r.t.Pod, "the operator's replacement member", func(ctx context.Context) (bool, error) {
		ms, err := x.mem.list(ctx)
		if err != nil {
			return false, err
		}
		nm := x.newMember(ms)
		if nm == nil || len(nm.PeerURLs) == 0 {
			return false, keepTrying{errors.New("no replacement member yet")}
		}
		x.learner, x.res.NewMemberID = nm.ID, nm.ID
		pod, err := x.replacementPod(ctx, nm.PeerURLs[0])
		switch {
		case err != nil:
			return false, keepTrying{err}
		case pod == nil || pod.Spec.NodeName == "":
			return false, keepTrying{errors.New("the replacement's pod is not scheduled yet")}
		case pod.Spec.NodeName != x.p.TargetNode:
			return false, fmt.Errorf("%w: the operator placed the replacement %s on %s", ErrTargetNode, pod.Name, pod.Spec.NodeName)
		case pod.Status.Phase != corev1.PodRunning:
			return false, keepTrying{fmt.Errorf("pod %s is %s", pod.Name, pod.Status.Phase)}
		}
		msg = fmt.Sprintf("member %s (pod %s) joined on %s (learner=%t)", FormatID(nm.ID), pod.Name, pod.Spec.NodeName, nm.IsLearner)
		return true, nil
	})
	return msg, false, err
}

func (x *run) waitVoter(ctx context.Context) (string, bool, error) {
	err := retry(ctx, x.r.t.catchUp(0), "the operator to promote the replacement", func(ctx context.Context) (bool, error) {
		ms, err := x.mem.list(ctx)
		if err != nil {
			return false, err
		}
		nm := x.newMember(ms)
		if nm == nil {
			return false, fmt.Errorf("%w: the replacement member left", ErrUnexpectedMember)
		}
		if nm.IsLearner {
			return false, keepTrying{errors.New("still a learner")}
		}
		return true, nil
	})
	if err != nil {
		return "", false, err
	}
	x.res.PromotedAt = time.Now()
	return "member " + FormatID(x.learner) + " is a voter", false, nil
}
