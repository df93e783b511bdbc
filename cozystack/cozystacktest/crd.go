package cozystacktest

import (
	"context"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/rest"

	"github.com/cozystack/tenantkit/internal/crds"
	"github.com/cozystack/tenantkit/tenant"
)

// CRDs returns CustomResourceDefinitions with the group, version, kinds and
// plurals of Cozystack's Kubernetes and Tenant applications. Their schemas
// keep any spec and status (Cozystack validates in its chart, as package
// tenant's Validate does), and status is a subresource as in Cozystack.
func CRDs() []*apiextensionsv1.CustomResourceDefinition {
	return []*apiextensionsv1.CustomResourceDefinition{
		crd(tenant.KubernetesKind, "kuberneteses"),
		crd(tenant.TenantKind, "tenants"),
	}
}

func crd(kind, plural string) *apiextensionsv1.CustomResourceDefinition {
	return crds.Open{
		Group: tenant.Group, Version: tenant.GroupVersion.Version, Kind: kind,
		Plural: plural, Categories: []string{"cozystack"},
	}.Definition()
}

// installCRDs creates (or updates) the CRDs of CRDs on the cluster rc
// points at and waits until they are served. It is safe to call again.
func installCRDs(ctx context.Context, rc *rest.Config) error {
	return crds.Install(ctx, rc, CRDs()...)
}
