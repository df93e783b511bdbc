package ref_test

import (
	"fmt"

	"github.com/cozystack/tenantkit/ref"
)

func ExampleCluster() {
	c := ref.Cluster{Namespace: "tenant-acme", Name: "prod"}
	if err := c.Validate(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.Release())
	fmt.Println(c.AdminKubeconfigSecret())
	fmt.Println(c.ClientID())
	fmt.Println(c.TenantGroups()[2])
	// Output:
	// kubernetes-prod
	// kubernetes-prod-admin-kubeconfig
	// tenant-acme-kubernetes-prod
	// tenant-acme-admin
}

func ExampleChildNamespace() {
	ns, _ := ref.ChildNamespace("tenant-root", "acme")
	dev, _ := ref.ChildNamespace(ns, "dev")
	path, _ := ref.ParseNamespace(dev)
	fmt.Println(ns, dev, path)
	// Output: tenant-acme tenant-acme-dev [root acme dev]
}
