package tenant

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/cozystack/tenantkit/ref"
)

// The API of Cozystack's applications. In Cozystack it is served by the
// aggregated cozystack-api; for tests, package cozystacktest installs CRDs with
// the same group, version and kinds. This package works with either.
const (
	// Group is the API group of Cozystack applications.
	Group = "apps.cozystack.io"
	// APIVersion is the group/version of the applications.
	APIVersion = Group + "/v1alpha1"
	// KubernetesKind is the kind of the managed Kubernetes application.
	KubernetesKind = "Kubernetes"
	// TenantKind is the kind of the tenant application.
	TenantKind = "Tenant"
)

// GroupVersion is the group/version of Cozystack applications.
var GroupVersion = schema.GroupVersion{Group: Group, Version: "v1alpha1"}

// KubernetesResource is the resource of Kubernetes applications (plural
// "kuberneteses").
var KubernetesResource = GroupVersion.WithResource("kuberneteses")

// TenantResource is the resource of Tenant applications.
var TenantResource = GroupVersion.WithResource("tenants")

// Kubernetes is Cozystack's apps.cozystack.io/v1alpha1 Kubernetes
// application: a managed tenant cluster, in a tenant namespace.
type Kubernetes struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitzero"`
	// Spec holds the chart values.
	Spec KubernetesSpec `json:"spec,omitzero"`
	// Status is reported by Cozystack; this package never writes it.
	Status Status `json:"status,omitzero"`

	// unknown holds the fields of an object read from the API that the
	// model does not know; they are written back on encode and apply.
	unknown *unknownFields
	// doc holds what ParseKubernetes saw in the document that Check
	// decides on (kept here, not in Spec, so that it never makes an empty
	// spec non-zero).
	doc *docFacts
}

// Status is the status Cozystack reports on an application.
type Status struct {
	// Version is the version of the application's chart.
	Version string `json:"version,omitempty"`
	// Conditions report readiness (type Ready) and progress.
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Ready reports whether the Ready condition is True.
func (s Status) Ready() bool {
	return meta.IsStatusConditionTrue(s.Conditions, "Ready")
}

// NewKubernetes returns the Kubernetes application c (its tenant namespace
// and name) with the given spec.
func NewKubernetes(c ref.Cluster, spec KubernetesSpec) *Kubernetes {
	return &Kubernetes{
		TypeMeta:   metav1.TypeMeta{APIVersion: APIVersion, Kind: KubernetesKind},
		ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: c.Name},
		Spec:       spec,
	}
}

// Ref returns the reference to the cluster; it derives every name.
func (k *Kubernetes) Ref() ref.Cluster { return ref.Cluster{Namespace: k.Namespace, Name: k.Name} }

// Host returns the apiserver's external host: spec.host, or
// DefaultHost(tenantHost).
func (k *Kubernetes) Host(tenantHost string) string {
	if k.Spec.Host != "" {
		return k.Spec.Host
	}
	return k.Ref().DefaultHost(tenantHost)
}
