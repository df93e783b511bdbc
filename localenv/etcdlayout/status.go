package etcdlayout

import (
	"context"
	"fmt"

	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// updateStatus is the real operator's updateStatus: readyMembers, the
// Available and Degraded conditions from ready against observed replicas,
// Progressing=False/Reconciled (and no deadline) once the observed target
// is reached, and the PDB.
func (o *Operator) updateStatus(ctx context.Context, cluster *unstructured.Unstructured, running, ready, voters int) error {
	desired := observedReplicas(cluster)
	changed := false
	if old, _, _ := unstructured.NestedInt64(cluster.Object, "status", "readyMembers"); old != int64(ready) {
		_ = unstructured.SetNestedField(cluster.Object, int64(ready), "status", "readyMembers")
		changed = true
	}
	msg := fmt.Sprintf("%d/%d members ready", ready, desired)
	switch {
	case ready == desired:
		changed = setCondition(cluster, condAvailable, true, reasonQuorumHealthy, "All members are ready") || changed
		changed = setCondition(cluster, condDegraded, false, reasonQuorumHealthy, "") || changed
	case ready > desired/2:
		changed = setCondition(cluster, condAvailable, true, reasonQuorumAvailable, msg) || changed
		changed = setCondition(cluster, condDegraded, true, reasonMembersUnhealthy, msg) || changed
	default:
		changed = setCondition(cluster, condAvailable, false, reasonQuorumLost, msg+", quorum lost") || changed
		changed = setCondition(cluster, condDegraded, true, reasonQuorumLost, "") || changed
	}
	if complete(cluster, running, ready) {
		changed = setCondition(cluster, condProgressing, false, reasonReconciled, "actual state matches status.observed") || changed
		if _, found, _ := unstructured.NestedFieldNoCopy(cluster.Object, "status", "progressDeadline"); found {
			unstructured.RemoveNestedField(cluster.Object, "status", "progressDeadline")
			changed = true
		}
	}
	if err := o.reconcilePDB(ctx, cluster, voters, desired); err != nil {
		o.log.Debug("reconcile PDB", "namespace", o.cfg.Namespace, "err", err)
	}
	if !changed {
		return nil
	}
	return o.updateClusterStatus(ctx, cluster)
}

// pdbMinAvailable is the real operator's eviction floor: quorum of
// max(live voters, observed target).
func pdbMinAvailable(voters, target int) int {
	anchor := max(voters, target)
	if anchor < 1 {
		return 0
	}
	return anchor/2 + 1
}

// reconcilePDB keeps the PDB over voters at pdbMinAvailable (none while
// there is no voter).
func (o *Operator) reconcilePDB(ctx context.Context, cluster *unstructured.Unstructured, voters, target int) error {
	pdbs := o.c.kube.PolicyV1().PodDisruptionBudgets(o.cfg.Namespace)
	cur, err := pdbs.Get(ctx, clusterName, metav1.GetOptions{})
	if voters == 0 {
		if err == nil {
			return pdbs.Delete(ctx, clusterName, metav1.DeleteOptions{})
		}
		return nil
	}
	want := intstr.FromInt32(int32(pdbMinAvailable(voters, target)))
	if apierrors.IsNotFound(err) {
		pdb := &policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Name: clusterName, Namespace: o.cfg.Namespace, OwnerReferences: controllerRef(cluster)},
			Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &want,
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{labelCluster: clusterName, labelRole: roleVoter}}},
		}
		_, err = pdbs.Create(ctx, pdb, metav1.CreateOptions{})
		return ignoreExists(err)
	}
	if err != nil {
		return err
	}
	if cur.Spec.MinAvailable != nil && *cur.Spec.MinAvailable == want {
		return nil
	}
	cur.Spec.MinAvailable = &want
	_, err = pdbs.Update(ctx, cur, metav1.UpdateOptions{})
	return err
}
