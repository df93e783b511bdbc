package cozystacktest

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
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/cozystack/tenantkit/tenant"
)

// CRDs returns CustomResourceDefinitions with the group, version, kinds and
// plurals of Cozystack's Kubernetes and Tenant applications. Their schemas
// keep any spec and status (Cozystack validates in its chart, as package
// tenant's Validate does), and status is a subresource as in Cozystack.
func CRDs() []*apiextensionsv1.CustomResourceDefinition {
	return []*apiextensionsv1.CustomResourceDefinition{
		crd(tenant.KubernetesKind, "kuberneteses", "KubernetesList"),
		crd(tenant.TenantKind, "tenants", "TenantList"),
	}
}

func crd(kind, plural, listKind string) *apiextensionsv1.CustomResourceDefinition {
	preserve := true
	open := apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: &preserve}
	return &apiextensionsv1.CustomResourceDefinition{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{Name: plural + "." + tenant.Group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: tenant.Group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Plural: plural, Kind: kind, ListKind: listKind, Categories: []string{"cozystack"},
			},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: tenant.GroupVersion.Version, Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type:       "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": open, "status": open},
				}},
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
			}},
		},
	}
}

// InstallCRDs creates (or updates) the CRDs of CRDs on the cluster rc
// points at and waits until they are served. It is safe to call again.
func InstallCRDs(ctx context.Context, rc *rest.Config) error {
	cs, err := apiextensions.NewForConfig(rc)
	if err != nil {
		return fmt.Errorf("apiextensions client: %w", err)
	}
	api := cs.ApiextensionsV1().CustomResourceDefinitions()
	for _, c := range CRDs() {
		_, err := api.Create(ctx, c, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			cur, gerr := api.Get(ctx, c.Name, metav1.GetOptions{})
			if gerr != nil {
				return fmt.Errorf("read CRD %s: %w", c.Name, gerr)
			}
			c.ResourceVersion = cur.ResourceVersion
			_, err = api.Update(ctx, c, metav1.UpdateOptions{})
		}
		if err != nil {
			return fmt.Errorf("install CRD %s: %w", c.Name, err)
		}
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return fmt.Errorf("dynamic client: %w", err)
	}
	// Established comes before the REST endpoint answers; wait for lists.
	return wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		for _, gvr := range []schema.GroupVersionResource{tenant.KubernetesResource, tenant.TenantResource} {
			if _, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
				return false, nil
			}
		}
		return true, nil
	})
}
