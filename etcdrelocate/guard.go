package etcdrelocate

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// AnnotationAllowDeletion is the break-glass annotation of the v1alpha2
// operator's member deletion guard (cozystack/etcd-operator PR #348, chart
// value memberDeletionProtection): a ValidatingAdmissionPolicy that denies
// DELETE on EtcdMembers to everyone but the operator's ServiceAccount, the
// garbage collector, the namespace controller and additionalAllowedUsers,
// unless the member carries this annotation with the value "true".
const AnnotationAllowDeletion = "etcd-operator.cozystack.io/allow-deletion"

// DeletionRefusedError is a deletion of an EtcdMember the apiserver refused
// even after tenantkit passed the operator's deletion guard (annotated the
// member AnnotationAllowDeletion=true) — typically because tenantkit may
// not patch or delete EtcdMembers (RBAC). Err is the apiserver's error.
type DeletionRefusedError struct {
	Namespace, Member string
	// Annotated reports whether the member had been annotated.
	Annotated bool
	Err       error
}

func (e *DeletionRefusedError) Error() string {
	return fmt.Sprintf("etcdrelocate: delete EtcdMember %s/%s (annotated %s=true: %t): %v",
		e.Namespace, e.Member, AnnotationAllowDeletion, e.Annotated, e.Err)
}

// Unwrap returns the apiserver's error.
func (e *DeletionRefusedError) Unwrap() error { return e.Err }

// deleteEtcdMemberGuarded deletes the EtcdMember name, passing the
// operator's deletion guard deliberately: a server-side dry-run delete
// (no side effect) shows whether the guard refuses this identity; if it
// does, the member is annotated AnnotationAllowDeletion=true first. The
// delete carries the member's UID as a precondition, so a member of the
// same name made in between is never deleted. It reports whether the
// guard was passed; a member already gone is no error.
func deleteEtcdMemberGuarded(ctx context.Context, members dynamic.ResourceInterface, ns, name string) (bool, error) {
	m, err := members.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("get etcdmember %s: %w", name, err)
	}
	if m.GetDeletionTimestamp() != nil {
		return false, nil
	}
	uid := m.GetUID()
	opts := metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}
	dry := opts
	dry.DryRun = []string{metav1.DryRunAll}
	guarded := false
	switch err := members.Delete(ctx, name, dry); {
	case apierrors.IsNotFound(err):
		return false, nil
	case apierrors.IsForbidden(err):
		guarded = true
		if m.GetAnnotations()[AnnotationAllowDeletion] != "true" {
			patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:"true"}}}`, AnnotationAllowDeletion)
			if _, err := members.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
				return true, &DeletionRefusedError{Namespace: ns, Member: name, Err: err}
			}
		}
	case err != nil:
		return false, fmt.Errorf("dry-run delete etcdmember %s: %w", name, err)
	}
	if err := members.Delete(ctx, name, opts); err != nil && !apierrors.IsNotFound(err) {
		return guarded, &DeletionRefusedError{Namespace: ns, Member: name, Annotated: guarded, Err: err}
	}
	return guarded, nil
}
