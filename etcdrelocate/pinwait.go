package etcdrelocate

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
)

// waitPinAdopted waits until the v1alpha2 operator has adopted the
// EtcdCluster's affinity aff: status.observed.affinity equals it and the
// cluster is settled again (Progressing False/Reconciled, no deadline
// pending). The operator builds new members from status.observed, not from
// the spec, so a replacement made before this holds would use the old
// affinity. Not adopted within bound: an *OperatorStateError (reason
// SpecNotAdopted, or what keeps the operator from settling).
func waitPinAdopted(ctx context.Context, d dynamic.Interface, ns, cluster string, aff map[string]any, bound time.Duration) error {
	var last error
	err := retryWake(ctx, nil, bound, "the operator to adopt the placement", nil, func(ctx context.Context) (bool, error) {
		ec, err := d.Resource(gvrEtcdCluster).Namespace(ns).Get(ctx, cluster, metav1.GetOptions{})
		if err != nil {
			return false, keepTrying{fmt.Errorf("get etcdcluster: %w", err)}
		}
		last = pinAdopted(ec, aff)
		if last != nil {
			return false, keepTrying{last}
		}
		return true, nil
	})
	if err == nil {
		return nil
	}
	var oe *OperatorStateError
	if errors.As(last, &oe) && ctx.Err() == nil {
		oe.Doing += fmt.Sprintf(" (waited %s for the operator to adopt the placement)", bound)
		return oe
	}
	return err
}

// pinAdopted returns nil when ec's status.observed carries aff and the
// operator has settled, else the *OperatorStateError saying why not.
func pinAdopted(ec *unstructured.Unstructured, aff map[string]any) error {
	got, _, _ := unstructured.NestedMap(ec.Object, "status", "observed", "affinity")
	st := operatorStateOf(ec, nil)
	if !reflect.DeepEqual(jsonOrEmpty(got), jsonOrEmpty(aff)) {
		return &OperatorStateError{Cluster: ec.GetName(), Reason: OperatorSpecNotAdopted, Condition: "status.observed.affinity",
			Doing: "the operator has not latched the placement into status.observed; new members would get the old affinity"}
	}
	if st.Progressing != "False/Reconciled" {
		return &OperatorStateError{Cluster: ec.GetName(), Reason: OperatorProgressing, Condition: "Progressing=" + orUnknown(st.Progressing),
			Doing: "the operator adopted the placement and is still reconciling it"}
	}
	if !st.ProgressDeadline.IsZero() {
		return &OperatorStateError{Cluster: ec.GetName(), Reason: OperatorDeadline,
			Condition: "status.progressDeadline=" + st.ProgressDeadline.UTC().Format(time.RFC3339), Doing: "a reconcile is in flight"}
	}
	return nil
}

// waitSpecAffinityAdopted is waitPinAdopted for the affinity the
// EtcdCluster's spec has now: a resumed run's pin, set by the run before.
func waitSpecAffinityAdopted(ctx context.Context, d dynamic.Interface, ns, cluster string, bound time.Duration) error {
	if d == nil {
		return fmt.Errorf("%w: Config.Dynamic is required for the v1alpha2 layouts", ErrInvalidConfig)
	}
	ec, err := d.Resource(gvrEtcdCluster).Namespace(ns).Get(ctx, cluster, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get etcdcluster: %w", err)
	}
	aff, _, _ := unstructured.NestedMap(ec.Object, "spec", "affinity")
	return waitPinAdopted(ctx, d, ns, cluster, aff, bound)
}
