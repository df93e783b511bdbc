package localenv

import (
	"context"
	"fmt"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// HostNetworkPolicy names the MutatingAdmissionPolicy (and its binding)
// that a cluster of kubelet nodes installs: it puts every new pod on the
// host network (there is no CNI), with its container ports as host ports
// (which the apiserver requires of host-network pods, and which keep two
// pods that listen on the same port off one node), and never pulling an
// image (kubelet nodes have only the images tenantkit gives them).
const HostNetworkPolicy = "tenantkit-host-network"

// hostNetworkMutation is the policy's apply configuration (CEL).
const hostNetworkMutation = `Object{
  spec: Object.spec{
    hostNetwork: true,
    dnsPolicy: "ClusterFirstWithHostNet",
    containers: object.spec.containers.map(c, Object.spec.containers{
      name: c.name,
      imagePullPolicy: "Never",
      ports: (has(c.ports) ? c.ports : []).map(p, Object.spec.containers.ports{
        containerPort: p.containerPort,
        protocol: has(p.protocol) ? p.protocol : "TCP",
        hostPort: p.containerPort
      })
    }),
    initContainers: (has(object.spec.initContainers) ? object.spec.initContainers : []).map(c, Object.spec.initContainers{
      name: c.name,
      imagePullPolicy: "Never"
    })
  }
}`

// installHostNetworkPolicy creates the policy and its binding and waits
// until the apiserver applies it (a dry-run pod comes back mutated).
func installHostNetworkPolicy(ctx context.Context, cs kubernetes.Interface, timeout time.Duration) error {
	api := cs.AdmissionregistrationV1()
	policy := &admissionregistrationv1.MutatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: HostNetworkPolicy},
		Spec: admissionregistrationv1.MutatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}},
				},
			}}},
			FailurePolicy:      ptr.To(admissionregistrationv1.Fail),
			ReinvocationPolicy: admissionregistrationv1.NeverReinvocationPolicy,
			Mutations: []admissionregistrationv1.Mutation{{
				PatchType:          admissionregistrationv1.PatchTypeApplyConfiguration,
				ApplyConfiguration: &admissionregistrationv1.ApplyConfiguration{Expression: hostNetworkMutation},
			}},
		},
	}
	binding := &admissionregistrationv1.MutatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: HostNetworkPolicy},
		Spec:       admissionregistrationv1.MutatingAdmissionPolicyBindingSpec{PolicyName: HostNetworkPolicy},
	}
	if _, err := api.MutatingAdmissionPolicies().Create(ctx, policy, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("localenv: host network policy: %w", err)
	}
	if _, err := api.MutatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("localenv: host network policy: %w", err)
	}
	probe := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "tenantkit-policy-probe-", Namespace: metav1.NamespaceDefault},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "probe",
			Ports: []corev1.ContainerPort{{ContainerPort: 80}}}}},
	}
	var last error
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		got, err := cs.CoreV1().Pods(metav1.NamespaceDefault).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			last = err
			return false, nil
		}
		c := got.Spec.Containers[0]
		return got.Spec.HostNetwork && c.Ports[0].HostPort == 80 && c.ImagePullPolicy == corev1.PullNever, nil
	})
	if err != nil {
		return fmt.Errorf("localenv: host network policy not in effect (last error: %v): %w", last, err)
	}
	return nil
}
