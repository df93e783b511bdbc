package crds

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Open describes a namespaced custom resource whose spec and status are
// kept as written (x-kubernetes-preserve-unknown-fields), with a status
// subresource: the shape of the stand-ins the local environment installs
// for operators' and Cozystack's CRDs, whose validation lives elsewhere.
type Open struct {
	Group, Version, Kind, Plural, Singular string
	ShortNames, Categories                 []string
	// Scale adds the /scale subresource (.spec.replicas, .status.replicas,
	// .status.selector), which the disruption controller needs on the
	// controller of pods a PDB selects.
	Scale bool
}

// GVR returns the resource the definition serves.
func (o Open) GVR() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: o.Group, Version: o.Version, Resource: o.Plural}
}

// Definition renders the CustomResourceDefinition.
func (o Open) Definition() *apiextensionsv1.CustomResourceDefinition {
	keep := true
	obj := apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: &keep}
	sub := &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}}
	if o.Scale {
		sel := ".status.selector"
		sub.Scale = &apiextensionsv1.CustomResourceSubresourceScale{
			SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas", LabelSelectorPath: &sel,
		}
	}
	return &apiextensionsv1.CustomResourceDefinition{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{Name: o.Plural + "." + o.Group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: o.Group,
			Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Kind: o.Kind, ListKind: o.Kind + "List", Plural: o.Plural, Singular: o.Singular,
				ShortNames: o.ShortNames, Categories: o.Categories,
			},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: o.Version, Served: true, Storage: true,
				Subresources: sub,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type:       "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": obj, "status": obj},
				}},
			}},
		},
	}
}
