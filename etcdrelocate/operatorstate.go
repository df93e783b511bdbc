package etcdrelocate

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The v1alpha2 operator (cozystack/etcd-operator) latches the EtcdCluster's
// spec into status.observed and reconciles toward that copy; once
// status.progressDeadline passes on an incomplete cluster it reports
// Available=False/DeadlineExceeded and stops before it scales or promotes
// (controllers/etcdcluster_controller.go, handleDeadlineExceeded;
// docs/concepts.md "Locking pattern"). A member deleted then is removed by
// its finalizer and never replaced, so tenantkit deletes a member only
// while the operator is settled: OperatorState says what it is doing and
// checkOperatorState refuses everything else.

// OperatorState is the v1alpha2 operator's own account of an EtcdCluster,
// read from its status and the EtcdMembers.
type OperatorState struct {
	// Available, Degraded and Progressing are the conditions as
	// "Status/Reason" ("" when absent), for example "True/QuorumHealthy".
	Available, Degraded, Progressing string
	// ObservedMatchesSpec reports status.observed equal to the spec's
	// latched fields (replicas, version, storage, affinity, topology
	// spread, ...): the operator has adopted the spec.
	ObservedMatchesSpec bool
	// ObservedReplicas is status.observed.replicas (0 before the first
	// latch).
	ObservedReplicas int
	// ReadyMembers is status.readyMembers.
	ReadyMembers int
	// ProgressDeadline is status.progressDeadline (zero when none is
	// pending).
	ProgressDeadline time.Time
	// Deleting names the EtcdMembers being deleted.
	Deleting []string
}

// OperatorStateReason names what about the operator's state refused a
// member deletion.
type OperatorStateReason string

// The reasons of an OperatorStateError.
const (
	OperatorNotAvailable   OperatorStateReason = "NotAvailable"
	OperatorDegraded       OperatorStateReason = "Degraded"
	OperatorProgressing    OperatorStateReason = "Progressing"
	OperatorSpecNotAdopted OperatorStateReason = "SpecNotAdopted"
	OperatorDeadline       OperatorStateReason = "DeadlinePending"
	OperatorMembersUnready OperatorStateReason = "MembersNotReady"
	OperatorDeleting       OperatorStateReason = "MemberBeingDeleted"
)

// OperatorStateError refuses a member deletion because of the v1alpha2
// operator's state: Condition is what the operator reports (a condition as
// Type=Status/Reason, or the status field), Doing what that means it is
// doing. errors.Is(err, ErrRolloutInProgress) holds.
type OperatorStateError struct {
	Cluster   string
	Reason    OperatorStateReason
	Condition string
	Doing     string
}

func (e *OperatorStateError) Error() string {
	return fmt.Sprintf("etcdrelocate: EtcdCluster %s: %s (%s): %s", e.Cluster, e.Reason, e.Condition, e.Doing)
}

// Unwrap returns ErrRolloutInProgress.
func (e *OperatorStateError) Unwrap() error { return ErrRolloutInProgress }

// operatorStateOf reads an EtcdCluster and its EtcdMembers.
func operatorStateOf(ec *unstructured.Unstructured, members []unstructured.Unstructured) *OperatorState {
	st := &OperatorState{Available: conditionOf(ec, "Available"), Degraded: conditionOf(ec, "Degraded"),
		Progressing: conditionOf(ec, "Progressing")}
	obs, found, _ := unstructured.NestedMap(ec.Object, "status", "observed")
	spec, _, _ := unstructured.NestedMap(ec.Object, "spec")
	if found {
		n, _, _ := unstructured.NestedFieldNoCopy(obs, "replicas")
		st.ObservedReplicas = asInt(n)
		st.ObservedMatchesSpec = observedEqual(obs, spec)
	}
	ready, _, _ := unstructured.NestedFieldNoCopy(ec.Object, "status", "readyMembers")
	st.ReadyMembers = asInt(ready)
	if s, ok, _ := unstructured.NestedString(ec.Object, "status", "progressDeadline"); ok && s != "" {
		st.ProgressDeadline, _ = time.Parse(time.RFC3339, s)
	}
	for _, m := range members {
		if m.GetDeletionTimestamp() != nil {
			st.Deleting = append(st.Deleting, m.GetName())
		}
	}
	return st
}

// latchedFields are the spec fields the operator copies into
// status.observed (snapshotSpecIntoObserved).
var latchedFields = []string{"replicas", "version", "storage", "resources", "affinity",
	"topologySpreadConstraints", "additionalMetadata", "options", "imagePullSecrets"}

// observedEqual compares status.observed with the spec's latched fields
// (replicas default 3; absent and empty are equal).
func observedEqual(obs, spec map[string]any) bool {
	for _, f := range latchedFields {
		a, b := obs[f], spec[f]
		if f == "replicas" {
			if b == nil {
				b = int64(3)
			}
			if asInt(a) != asInt(b) {
				return false
			}
			continue
		}
		if !reflect.DeepEqual(jsonOrEmpty(a), jsonOrEmpty(b)) {
			return false
		}
	}
	return true
}

func jsonOrEmpty(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	switch t := out.(type) {
	case map[string]any:
		if len(t) == 0 {
			return nil
		}
	case []any:
		if len(t) == 0 {
			return nil
		}
	}
	return out
}

func asInt(v any) int {
	switch n := v.(type) {
	case int64:
		return int(n)
	case float64:
		return int(n)
	case int:
		return n
	}
	return 0
}

func conditionOf(u *unstructured.Unstructured, typ string) string {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == typ {
			return fmt.Sprintf("%v/%v", m["status"], m["reason"])
		}
	}
	return ""
}

// checkOperatorState returns nil when the operator is settled — Available
// True/QuorumHealthy, not Degraded, Progressing False/Reconciled, the spec
// adopted, no deadline pending, every observed member ready, no member
// being deleted — else the first *OperatorStateError. now is when st was
// read.
func checkOperatorState(cluster string, st *OperatorState, now time.Time) error {
	refuse := func(r OperatorStateReason, cond, doing string) error {
		return &OperatorStateError{Cluster: cluster, Reason: r, Condition: cond, Doing: doing}
	}
	switch {
	case st.Available == "False/DeadlineExceeded":
		return refuse(OperatorNotAvailable, "Available="+st.Available,
			"the operator gave up on its target and stops before it scales or promotes; a removed member would not be replaced (edit the spec to make it retry)")
	case st.Available != "True/QuorumHealthy":
		return refuse(OperatorNotAvailable, "Available="+orUnknown(st.Available), "the operator does not report a healthy quorum")
	case strings.HasPrefix(st.Degraded, "True/"):
		return refuse(OperatorDegraded, "Degraded="+st.Degraded, "some members are unhealthy")
	case st.Progressing != "False/Reconciled":
		return refuse(OperatorProgressing, "Progressing="+orUnknown(st.Progressing), "the operator is still acting on an earlier change")
	case !st.ObservedMatchesSpec:
		return refuse(OperatorSpecNotAdopted, "status.observed", "the spec differs from status.observed: the operator has not adopted it yet")
	case !st.ProgressDeadline.IsZero():
		return refuse(OperatorDeadline, "status.progressDeadline="+st.ProgressDeadline.UTC().Format(time.RFC3339),
			deadlineDoing(st.ProgressDeadline, now))
	case st.ReadyMembers != st.ObservedReplicas:
		return refuse(OperatorMembersUnready, fmt.Sprintf("status.readyMembers=%d", st.ReadyMembers),
			fmt.Sprintf("%d of %d observed members ready", st.ReadyMembers, st.ObservedReplicas))
	case len(st.Deleting) > 0:
		return refuse(OperatorDeleting, "EtcdMember "+strings.Join(st.Deleting, ", ")+" deleting",
			"the operator makes no other change until that deletion completes")
	}
	return nil
}

func deadlineDoing(d, now time.Time) string {
	if now.Before(d) {
		return "a reconcile is in flight until " + d.UTC().Format(time.RFC3339)
	}
	return "the deadline has passed: the operator is about to report DeadlineExceeded"
}
