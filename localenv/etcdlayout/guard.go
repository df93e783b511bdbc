package etcdlayout

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// The member deletion guard of cozystack/etcd-operator (PR #348, chart value
// memberDeletionProtection; charts/etcd-operator/templates/
// member-deletion-policy.yaml): a ValidatingAdmissionPolicy, enforced by the
// kube-apiserver itself, that denies DELETE on EtcdMembers to everyone but
// the operator's ServiceAccount, the garbage collector, the namespace
// controller, kube-controller-manager and additionalAllowedUsers, unless the
// member carries AllowDeletionAnnotation=true.
const (
	// AllowDeletionAnnotation is the guard's break-glass annotation; its
	// value must be "true".
	AllowDeletionAnnotation = "etcd-operator.cozystack.io/allow-deletion"
	// OperatorUser is the identity the stand-in operator runs as when the
	// guard is installed by StartV1alpha2: the ServiceAccount of
	// Cozystack's etcd-operator release.
	OperatorUser = "system:serviceaccount:cozy-etcd-operator:etcd-operator"
	// guardName is the chart's policy and binding name for a release
	// called etcd-operator.
	guardName = "etcd-operator-protect-members"
)

// GuardConfig configures InstallMemberDeletionGuard.
type GuardConfig struct {
	// OperatorUser is the operator's ServiceAccount user name. Default
	// OperatorUser.
	OperatorUser string
	// AdditionalAllowedUsers are the chart's
	// memberDeletionProtection.additionalAllowedUsers.
	AdditionalAllowedUsers []string
}

// guardPolicy renders the chart's policy and binding (cluster-wide
// release: no namespace selector).
func guardPolicy(cfg GuardConfig) (*admissionv1.ValidatingAdmissionPolicy, *admissionv1.ValidatingAdmissionPolicyBinding, error) {
	if cfg.OperatorUser == "" {
		cfg.OperatorUser = OperatorUser
	}
	allowed := append([]string{cfg.OperatorUser,
		"system:serviceaccount:kube-system:generic-garbage-collector",
		"system:serviceaccount:kube-system:namespace-controller",
		"system:kube-controller-manager"}, cfg.AdditionalAllowedUsers...)
	list, err := json.Marshal(allowed)
	if err != nil {
		return nil, nil, err
	}
	fail := admissionv1.Fail
	forbidden := metav1.StatusReasonForbidden
	vap := &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: guardName},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: &fail,
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: []admissionv1.OperationType{admissionv1.Delete},
					Rule: admissionv1.Rule{APIGroups: []string{EtcdMembers.Group}, APIVersions: []string{"*"},
						Resources: []string{"etcdmembers"}},
				}}}},
			Validations: []admissionv1.Validation{{
				Expression: "request.userInfo.username in " + string(list) + ` || (has(oldObject.metadata.annotations)` +
					` && "` + AllowDeletionAnnotation + `" in oldObject.metadata.annotations` +
					` && oldObject.metadata.annotations["` + AllowDeletionAnnotation + `"] == "true")`,
				Reason: &forbidden,
				MessageExpression: `"EtcdMember " + oldObject.metadata.name + " is managed exclusively by etcd-operator, ` +
					`and deleting it removes the member from etcd and releases its data volume — the data is not ` +
					`recoverable from here. Scale the EtcdCluster instead. If you really mean it, annotate the member ` +
					`with ` + AllowDeletionAnnotation + `=true first."`,
			}},
		},
	}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: guardName},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: guardName,
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny}},
	}
	return vap, binding, nil
}

// InstallMemberDeletionGuard installs the chart's member deletion guard on
// the cluster behind rc (policy and binding, left alone if present). The
// apiserver enforces it once its policy informer has caught up, which takes
// a moment; WaitGuarded waits for that.
func InstallMemberDeletionGuard(ctx context.Context, rc *rest.Config, cfg GuardConfig) error {
	kube, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return err
	}
	vap, binding, err := guardPolicy(cfg)
	if err != nil {
		return err
	}
	adm := kube.AdmissionregistrationV1()
	if _, err := adm.ValidatingAdmissionPolicies().Create(ctx, vap, metav1.CreateOptions{}); ignoreExists(err) != nil {
		return fmt.Errorf("create ValidatingAdmissionPolicy %s: %w", guardName, err)
	}
	if _, err := adm.ValidatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{}); ignoreExists(err) != nil {
		return fmt.Errorf("create ValidatingAdmissionPolicyBinding %s: %w", guardName, err)
	}
	return nil
}

// WaitGuarded waits until a server-side dry-run delete of the EtcdMember,
// made with rc's identity, is refused by the guard (no side effect).
func WaitGuarded(ctx context.Context, rc *rest.Config, namespace, member string) error {
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return err
	}
	var last error
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		last = dyn.Resource(EtcdMembers).Namespace(namespace).Delete(ctx, member,
			metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
		return apierrors.IsForbidden(last), nil
	})
	if err != nil {
		return fmt.Errorf("wait for the member deletion guard on %s/%s (last dry-run delete: %v): %w", namespace, member, last, err)
	}
	return nil
}
