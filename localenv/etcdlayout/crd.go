package etcdlayout

import (
	"context"
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
)

// crdSpec describes a namespaced custom resource with a status subresource.
type crdSpec struct {
	group, version, kind, plural, singular string
	shortNames                             []string
	// scale adds the /scale subresource (.spec.replicas, .status.replicas,
	// .status.selector), which the disruption controller needs on the
	// controller of pods a PDB selects.
	scale bool
}

func (c crdSpec) GVR() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: c.group, Version: c.version, Resource: c.plural}
}

// definition renders the CRD. The schema accepts any spec and status
// (x-kubernetes-preserve-unknown-fields): the layouts write what the
// upstream operators document, and nothing here validates it further.
func (c crdSpec) definition() *apiextensionsv1.CustomResourceDefinition {
	open := true
	obj := apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: &open}
	sub := &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}}
	if c.scale {
		sel := ".status.selector"
		sub.Scale = &apiextensionsv1.CustomResourceSubresourceScale{
			SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas", LabelSelectorPath: &sel,
		}
	}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: c.plural + "." + c.group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: c.group,
			Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Kind: c.kind, ListKind: c.kind + "List", Plural: c.plural, Singular: c.singular, ShortNames: c.shortNames,
			},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: c.version, Served: true, Storage: true,
				Subresources: sub,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type:       "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": obj, "status": obj},
				}},
			}},
		},
	}
}

// installCRDs creates the CRDs (keeping existing ones) and waits until the
// apiserver serves them.
func installCRDs(ctx context.Context, cs apiextensions.Interface, crds ...crdSpec) error {
	for _, c := range crds {
		def := c.definition()
		_, err := cs.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, def, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create CRD %s: %w", def.Name, err)
		}
		err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			got, err := cs.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, def.Name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			for _, cond := range got.Status.Conditions {
				if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			return fmt.Errorf("wait for CRD %s: %w", def.Name, err)
		}
	}
	return nil
}

var aenixCRD = crdSpec{group: "etcd.aenix.io", version: "v1alpha1", kind: "EtcdCluster",
	plural: "etcdclusters", singular: "etcdcluster"}

// AenixEtcdClusters is the resource of etcd.aenix.io/v1alpha1 EtcdCluster,
// the tenant etcd of Cozystack ≤ v1.5.
var AenixEtcdClusters = aenixCRD.GVR()

var (
	cozystackClusterCRD = crdSpec{group: "etcd-operator.cozystack.io", version: "v1alpha2", kind: "EtcdCluster",
		plural: "etcdclusters", singular: "etcdcluster"}
	cozystackMemberCRD = crdSpec{group: "etcd-operator.cozystack.io", version: "v1alpha2", kind: "EtcdMember",
		plural: "etcdmembers", singular: "etcdmember", scale: true}
)

// EtcdClusters and EtcdMembers are the resources of Cozystack ≥ v1.6's
// etcd-operator.cozystack.io/v1alpha2 EtcdCluster and EtcdMember.
var (
	EtcdClusters = cozystackClusterCRD.GVR()
	EtcdMembers  = cozystackMemberCRD.GVR()
)
