package tenant

import (
	"github.com/cozystack/tenantkit/ref"
)

// Services says which tenant namespace provides each shared service to the
// applications of one tenant namespace: the chart's _namespace values. A
// tenant that runs a service provides it to itself; otherwise it inherits
// its parent's provider. An empty field means no tenant up the hierarchy
// runs the service.
type Services struct {
	// Etcd is the namespace whose etcd stores this tenant's clusters; it
	// is also the name of the Kamaji DataStore.
	Etcd string `json:"etcd,omitempty"`
	// Ingress is the namespace whose ingress controller serves this tenant.
	Ingress string `json:"ingress,omitempty"`
	// Gateway is the namespace whose Gateway serves this tenant (never
	// inherited).
	Gateway string `json:"gateway,omitempty"`
	// Monitoring is the namespace whose monitoring stack collects this
	// tenant's metrics and logs.
	Monitoring string `json:"monitoring,omitempty"`
	// SeaweedFS is the namespace whose SeaweedFS backs this tenant's
	// Buckets; it names their BucketClasses.
	SeaweedFS string `json:"seaweedfs,omitempty"`
	// Host is the tenant's domain.
	Host string `json:"host,omitempty"`
	// SchedulingClass is the SchedulingClass of the tenant's workloads.
	SchedulingClass string `json:"schedulingClass,omitempty"`
}

// RootServices returns the services of tenant-root, whose tenant has spec
// root on a platform with the given root host.
func RootServices(root TenantSpec, rootHost string) Services {
	s := Services{Host: rootHost, SchedulingClass: root.SchedulingClass}
	if root.Host != "" {
		s.Host = root.Host
	}
	own := func(on bool) string {
		if on {
			return ref.RootNamespace
		}
		return ""
	}
	s.Etcd, s.Ingress, s.Monitoring, s.SeaweedFS = own(root.Etcd), own(root.Ingress), own(root.Monitoring), own(root.SeaweedFS)
	if root.Gateway != nil && *root.Gateway {
		s.Gateway = ref.RootNamespace
	}
	return s
}

// Resolve returns the services of the namespace tenant t creates, given the
// services of its parent namespace (t.Namespace), as the tenant chart
// computes them.
func (t *Tenant) Resolve(parent Services) (Services, error) {
	ns, err := t.ChildNamespace()
	if err != nil {
		return Services{}, err
	}
	s := parent
	s.Gateway = ""
	s.Host = t.Spec.Host
	if s.Host == "" && parent.Host != "" {
		s.Host = t.Name + "." + parent.Host
	}
	if t.Spec.Etcd {
		s.Etcd = ns
	}
	if t.Spec.Ingress {
		s.Ingress = ns
	}
	if t.Spec.Monitoring {
		s.Monitoring = ns
	}
	if t.Spec.SeaweedFS {
		s.SeaweedFS = ns
	}
	if t.Spec.Gateway != nil && *t.Spec.Gateway {
		s.Gateway = ns
	}
	if s.SchedulingClass == "" {
		s.SchedulingClass = t.Spec.SchedulingClass
	}
	return s, nil
}

// Namespace labels the tenant chart sets; they carry the Services of the
// namespace.
const (
	labelEtcd            = "namespace.cozystack.io/etcd"
	labelIngress         = "namespace.cozystack.io/ingress"
	labelGateway         = "namespace.cozystack.io/gateway"
	labelMonitoring      = "namespace.cozystack.io/monitoring"
	labelSeaweedFS       = "namespace.cozystack.io/seaweedfs"
	labelHost            = "namespace.cozystack.io/host"
	labelSchedulingClass = "scheduler.cozystack.io/scheduling-class"
	// labelTenantPrefix prefixes one label per ancestor tenant namespace
	// (and the namespace itself): tenant.cozystack.io/tenant-acme.
	labelTenantPrefix = "tenant.cozystack.io/"
)

// NamespaceLabels returns the labels the tenant chart puts on namespace ns
// with services s: one tenant.cozystack.io/<ancestor> label per ancestor
// namespace and the namespace.cozystack.io/* service labels.
func (s Services) NamespaceLabels(ns string) (map[string]string, error) {
	ancestors, err := ref.Ancestors(ns)
	if err != nil {
		return nil, err
	}
	l := map[string]string{
		labelEtcd: s.Etcd, labelIngress: s.Ingress, labelGateway: s.Gateway,
		labelMonitoring: s.Monitoring, labelSeaweedFS: s.SeaweedFS, labelHost: s.Host,
	}
	for _, a := range ancestors {
		l[labelTenantPrefix+a] = ""
	}
	if s.SchedulingClass != "" {
		l[labelSchedulingClass] = s.SchedulingClass
	}
	return l, nil
}

// ServicesFromLabels reads the services of a namespace from its labels.
func ServicesFromLabels(labels map[string]string) Services {
	return Services{
		Etcd: labels[labelEtcd], Ingress: labels[labelIngress], Gateway: labels[labelGateway],
		Monitoring: labels[labelMonitoring], SeaweedFS: labels[labelSeaweedFS], Host: labels[labelHost],
		SchedulingClass: labels[labelSchedulingClass],
	}
}
