package cozystack_test

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"

	"github.com/cozystack/tenantkit/cozystack"
	"github.com/cozystack/tenantkit/ref"
	"github.com/cozystack/tenantkit/tenant"
)

// fakeManagement returns client-go's fakes standing in for a management
// cluster with one tenant namespace and its cozystack-values Secret.
func fakeManagement() cozystack.Config {
	values, _ := tenant.ValuesSecretFor("tenant-acme", tenant.Platform{RootHost: "example.org"},
		tenant.Services{Etcd: "tenant-root", Host: "acme.example.org"})
	return cozystack.Config{
		Dynamic: dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
			tenant.KubernetesResource: "KubernetesList", tenant.TenantResource: "TenantList"}),
		Clientset: fake.NewClientset(values),
	}
}

// Apply a Kubernetes application and reach it through a handle. Any
// dynamic client and clientset work: here client-go's fakes.
func Example() {
	ctx := context.Background()
	c, err := cozystack.New(fakeManagement())
	if err != nil {
		fmt.Println(err)
		return
	}
	_, err = c.ApplyKubernetes(ctx, tenant.NewKubernetes(ref.Cluster{Namespace: "tenant-acme", Name: "prod"}, tenant.KubernetesSpec{Version: "v1.34"}))
	if err != nil {
		fmt.Println(err)
		return
	}
	cl, err := c.Cluster(ref.Cluster{Namespace: "tenant-acme", Name: "prod"})
	if err != nil {
		fmt.Println(err)
		return
	}
	k, _ := cl.Kubernetes(ctx)
	host, _ := cl.Host(ctx)
	etcd, _ := cl.EtcdNamespace(ctx)
	fmt.Println(k.Spec.Version, host, etcd)

	// The chart's checks run before anything is written.
	_, err = c.ApplyKubernetes(ctx, tenant.NewKubernetes(ref.Cluster{Namespace: "tenant-acme", Name: "gpu"}, tenant.KubernetesSpec{
		Addons: tenant.Addons{HAMi: tenant.Addon{Enabled: true}}}))
	fmt.Println(err)
	// Output:
	// v1.34 kubernetes-prod.acme.example.org tenant-root
	// tenant: spec.addons.hami.enabled: addons.hami requires addons.gpuOperator to be enabled
}

// A handle from a management cluster's rest.Config, as a tool outside the
// cluster builds it; the package documentation's calls, compiled (they need
// a live management cluster, so there is no output to check).
func ExampleNewCluster() {
	ctx := context.Background()
	mgmt := &rest.Config{Host: "https://management.example.org:6443"}
	cl, err := cozystack.NewCluster(mgmt, ref.Cluster{Namespace: "tenant-acme", Name: "prod"}, cozystack.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	cs, err := cl.Clientset(ctx) // waits for Kamaji's admin kubeconfig
	if err != nil {
		fmt.Println(err)
		return
	}
	etcdNS, err := cl.EtcdNamespace(ctx) // the tenant etcd storing the cluster
	fmt.Println(cs != nil, etcdNS, err)
}
