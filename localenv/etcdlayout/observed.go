package etcdlayout

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// The locking pattern of the real operator (docs/concepts.md "Locking
// pattern"; controllers/etcdcluster_controller.go, snapshotSpecIntoObserved,
// specEqualsObserved, reconciliationComplete, handleDeadlineExceeded): the
// operator copies the spec into status.observed and reconciles toward that
// copy; a changed spec is adopted only once the copy is reached, or after
// status.progressDeadline has passed and the spec was edited since.

// Condition types and reasons of the real operator's EtcdCluster.
const (
	condAvailable   = "Available"
	condProgressing = "Progressing"
	condDegraded    = "Degraded"

	reasonQuorumHealthy      = "QuorumHealthy"
	reasonQuorumAvailable    = "QuorumAvailable"
	reasonQuorumLost         = "QuorumLost"
	reasonMembersUnhealthy   = "MembersUnhealthy"
	reasonDeadlineExceeded   = "DeadlineExceeded"
	reasonReconciled         = "Reconciled"
	reasonSpecChanged        = "SpecChanged"
	reasonInitialSnapshot    = "InitialSnapshot"
	reasonRetryAfterDeadline = "RetryAfterDeadline"
	reasonBootstrapFailed    = "BootstrapFailed"
)

// observedFields are the spec fields latched into status.observed.
var observedFields = []string{"replicas", "version", "storage", "resources", "affinity",
	"topologySpreadConstraints", "additionalMetadata", "options", "imagePullSecrets"}

// snapshotObserved is the spec as the operator latches it (replicas
// default 3).
func snapshotObserved(cluster *unstructured.Unstructured) map[string]any {
	spec, _, _ := unstructured.NestedMap(cluster.Object, "spec")
	obs := map[string]any{}
	for _, f := range observedFields {
		if v, ok := spec[f]; ok && v != nil {
			obs[f] = v
		}
	}
	if _, ok := obs["replicas"]; !ok {
		obs["replicas"] = int64(3)
	}
	return obs
}

// observed returns status.observed, nil before the first latch.
func observed(cluster *unstructured.Unstructured) map[string]any {
	obs, found, _ := unstructured.NestedMap(cluster.Object, "status", "observed")
	if !found {
		return nil
	}
	return obs
}

// specEqualsObserved reports whether the spec matches status.observed.
func specEqualsObserved(cluster *unstructured.Unstructured) bool {
	obs := observed(cluster)
	return obs != nil && reflect.DeepEqual(normalize(obs), normalize(snapshotObserved(cluster)))
}

// normalize round-trips v through JSON as the apiserver would (whole
// numbers come back as int64).
func normalize(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = utiljson.Unmarshal(b, &out)
	return out
}

// observedReplicas is status.observed.replicas.
func observedReplicas(cluster *unstructured.Unstructured) int {
	n, _, _ := unstructured.NestedInt64(cluster.Object, "status", "observed", "replicas")
	return int(n)
}

// complete is the real operator's reconciliationComplete: as many running
// members as observed replicas, a cluster ID, every member Ready.
func complete(cluster *unstructured.Unstructured, running, ready int) bool {
	if observed(cluster) == nil || running != observedReplicas(cluster) {
		return false
	}
	id, _, _ := unstructured.NestedString(cluster.Object, "status", "clusterID")
	if observedReplicas(cluster) > 0 && id == "" {
		return false
	}
	return ready == running
}

// deadlineExpired reports whether status.progressDeadline has passed.
func deadlineExpired(cluster *unstructured.Unstructured, now time.Time) bool {
	s, found, _ := unstructured.NestedString(cluster.Object, "status", "progressDeadline")
	if !found || s == "" {
		return false
	}
	t, err := time.Parse(time.RFC3339, s)
	return err == nil && !now.Before(t)
}

// progressDeadline is spec.progressDeadlineSeconds (default the operator's
// configured ProgressDeadline) from now.
func (o *Operator) progressDeadline(cluster *unstructured.Unstructured, now time.Time) string {
	d := o.cfg.ProgressDeadline
	if secs, found, _ := unstructured.NestedInt64(cluster.Object, "spec", "progressDeadlineSeconds"); found && secs > 0 {
		d = time.Duration(secs) * time.Second
	}
	return now.Add(d).UTC().Format(time.RFC3339)
}

// conditions reads status.conditions.
func conditions(cluster *unstructured.Unstructured) []metav1.Condition {
	raw, _, _ := unstructured.NestedSlice(cluster.Object, "status", "conditions")
	var out []metav1.Condition
	b, _ := json.Marshal(raw)
	_ = json.Unmarshal(b, &out)
	return out
}

// setCondition sets a condition on cluster (in memory) and reports whether
// anything changed.
func setCondition(cluster *unstructured.Unstructured, typ string, status bool, reason, msg string) bool {
	conds := conditions(cluster)
	st := metav1.ConditionFalse
	if status {
		st = metav1.ConditionTrue
	}
	if c := meta.FindStatusCondition(conds, typ); c != nil && c.Status == st && c.Reason == reason && c.Message == msg {
		return false
	}
	meta.SetStatusCondition(&conds, metav1.Condition{Type: typ, Status: st, Reason: reason, Message: msg,
		ObservedGeneration: cluster.GetGeneration()})
	var raw []any
	b, _ := json.Marshal(conds)
	_ = json.Unmarshal(b, &raw)
	_ = unstructured.SetNestedSlice(cluster.Object, raw, "status", "conditions")
	return true
}

// latch adopts the spec into status.observed with a fresh deadline and
// Progressing=True/reason.
func (o *Operator) latch(cluster *unstructured.Unstructured, reason, msg string) {
	_ = unstructured.SetNestedMap(cluster.Object, normalize(snapshotObserved(cluster)).(map[string]any), "status", "observed")
	_ = unstructured.SetNestedField(cluster.Object, o.progressDeadline(cluster, time.Now()), "status", "progressDeadline")
	setCondition(cluster, condProgressing, true, reason, msg)
}

// updateClusterStatus writes the whole status (a conflict is retried by the
// next pass).
func (o *Operator) updateClusterStatus(ctx context.Context, cluster *unstructured.Unstructured) error {
	_, err := o.c.dyn.Resource(etcdClusters).Namespace(o.cfg.Namespace).UpdateStatus(ctx, cluster, metav1.UpdateOptions{})
	return err
}

// lockingPattern runs the real operator's spec-change handling ahead of
// bootstrap and scaling. It reports whether the pass must stop here.
func (o *Operator) lockingPattern(ctx context.Context, cluster *unstructured.Unstructured, running, ready int) (bool, error) {
	if observed(cluster) == nil {
		o.latch(cluster, reasonInitialSnapshot, "snapshotted initial spec into status.observed")
		return true, o.updateClusterStatus(ctx, cluster)
	}
	done := complete(cluster, running, ready)
	if !done && deadlineExpired(cluster, time.Now()) {
		return true, o.deadlineExceeded(ctx, cluster)
	}
	if done && !specEqualsObserved(cluster) {
		o.log.Info("previous target reached; adopting new spec", "namespace", o.cfg.Namespace)
		o.latch(cluster, reasonSpecChanged, "adopting new spec after previous target reached")
		return true, o.updateClusterStatus(ctx, cluster)
	}
	return false, nil
}

// deadlineExceeded is handleDeadlineExceeded: park (no scaling, no
// promotion) until the spec is edited, then adopt it.
func (o *Operator) deadlineExceeded(ctx context.Context, cluster *unstructured.Unstructured) error {
	id, _, _ := unstructured.NestedString(cluster.Object, "status", "clusterID")
	if id == "" {
		changed := setCondition(cluster, condProgressing, false, reasonBootstrapFailed,
			"bootstrap deadline exceeded; delete the cluster and recreate to recover")
		changed = setCondition(cluster, condAvailable, false, reasonBootstrapFailed,
			fmt.Sprintf("could not bootstrap %d-member cluster within deadline", observedReplicas(cluster))) || changed
		if changed {
			return o.updateClusterStatus(ctx, cluster)
		}
		return nil
	}
	if specEqualsObserved(cluster) {
		changed := setCondition(cluster, condProgressing, false, reasonDeadlineExceeded,
			"deadline exceeded; edit spec to retry, or delete the cluster")
		changed = setCondition(cluster, condAvailable, false, reasonDeadlineExceeded,
			fmt.Sprintf("could not reach target of %d members within deadline", observedReplicas(cluster))) || changed
		if changed {
			o.log.Info("deadline exceeded; awaiting spec update", "namespace", o.cfg.Namespace)
			return o.updateClusterStatus(ctx, cluster)
		}
		return nil
	}
	o.log.Info("deadline exceeded but spec was updated; retrying with new target", "namespace", o.cfg.Namespace)
	o.latch(cluster, reasonRetryAfterDeadline, "adopting updated spec after previous deadline")
	return o.updateClusterStatus(ctx, cluster)
}
