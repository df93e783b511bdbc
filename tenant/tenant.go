package tenant

import (
	"github.com/cozystack/tenantkit/ref"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Tenant is Cozystack's apps.cozystack.io/v1alpha1 Tenant application. It
// lives in its parent's namespace (Namespace) under its own Name and
// creates the namespace ChildNamespace(Namespace, Name).
type Tenant struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitzero"`
	// Spec holds the tenant's values.
	Spec TenantSpec `json:"spec,omitzero"`
	// Status is reported by Cozystack.
	Status Status `json:"status,omitzero"`

	// unknown: see Kubernetes.
	unknown *unknownFields
}

// TenantSpec holds the values of Cozystack's tenant chart.
type TenantSpec struct {
	// Host is the tenant's domain. Default "<name>.<parent host>".
	Host string `json:"host,omitempty"`
	// Etcd runs an etcd in the tenant; its clusters and those of its
	// descendants without their own etcd use it.
	Etcd bool `json:"etcd,omitempty"`
	// Monitoring runs a monitoring stack in the tenant.
	Monitoring bool `json:"monitoring,omitempty"`
	// Ingress runs an ingress controller in the tenant.
	Ingress bool `json:"ingress,omitempty"`
	// Gateway runs a Gateway API gateway in the tenant. Unlike the other
	// services it is not inherited by child tenants.
	Gateway *bool `json:"gateway,omitempty"`
	// SeaweedFS runs SeaweedFS (S3 for Buckets) in the tenant.
	SeaweedFS bool `json:"seaweedfs,omitempty"`
	// ResourceQuotas limits the tenant's resources by name.
	ResourceQuotas map[string]resource.Quantity `json:"resourceQuotas,omitempty"`
	// SchedulingClass names a SchedulingClass for the tenant's workloads,
	// used when no ancestor sets one.
	SchedulingClass string `json:"schedulingClass,omitempty"`
	// Isolated is the legacy network isolation switch of older releases.
	Isolated *bool `json:"isolated,omitempty"`
}

// NewTenant returns a Tenant named name inside the tenant namespace parent.
func NewTenant(parent, name string, spec TenantSpec) *Tenant {
	return &Tenant{
		TypeMeta:   metav1.TypeMeta{APIVersion: APIVersion, Kind: TenantKind},
		ObjectMeta: metav1.ObjectMeta{Namespace: parent, Name: name},
		Spec:       spec,
	}
}

// ChildNamespace returns the namespace the tenant creates.
func (t *Tenant) ChildNamespace() (string, error) { return ref.ChildNamespace(t.Namespace, t.Name) }

// Validate checks the tenant's names.
func (t *Tenant) Validate() error {
	_, err := t.ChildNamespace()
	return err
}
