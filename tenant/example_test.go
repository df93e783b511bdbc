package tenant_test

import (
	"errors"
	"fmt"

	"github.com/cozystack/tenantkit/ref"
	"github.com/cozystack/tenantkit/tenant"
)

// A GPU cluster for tenant acme: the spec, the chart's checks, and the
// names Cozystack will give its objects.
func Example() {
	spec := tenant.KubernetesSpec{
		Version: "v1.34",
		NodeGroups: map[string]tenant.NodeGroup{
			"gpu": {MinReplicas: 1, MaxReplicas: new(3), InstanceType: "u1.xlarge",
				GPUs: []tenant.GPU{{Name: "nvidia.com/GA102GL_A10"}}},
		},
		Addons: tenant.Addons{
			GPUOperator: tenant.Addon{Enabled: true},
			HAMi:        tenant.Addon{Enabled: true},
		},
	}
	k := tenant.NewKubernetes("tenant-acme", "prod", spec)
	if err := k.Validate(tenant.Platform{}); err != nil {
		fmt.Println(err)
		return
	}
	c := k.Ref()
	fmt.Println(c.Release())
	fmt.Println(c.AdminKubeconfigSecret())
	for _, r := range k.AddonReleases(true) {
		fmt.Printf("%s -> %s in %s\n", r.Name, r.ReleaseName, r.TargetNamespace)
	}
	// Output:
	// kubernetes-prod
	// kubernetes-prod-admin-kubeconfig
	// kubernetes-prod-cilium -> cilium in cozy-cilium
	// kubernetes-prod-gpu-operator -> gpu-operator in cozy-gpu-operator
	// kubernetes-prod-hami -> hami in cozy-hami
	// kubernetes-prod-coredns -> coredns in kube-system
}

// Validate reports everything the chart would refuse to render, each
// problem with its field and a sentinel to branch on.
func ExampleKubernetesSpec_Validate() {
	spec := tenant.KubernetesSpec{
		OIDC:   tenant.OIDC{Mode: tenant.OIDCSystem},
		Addons: tenant.Addons{HAMi: tenant.Addon{Enabled: true}},
	}
	err := spec.Validate(tenant.Platform{OIDCEnabled: false})
	var ve *tenant.ValidationError
	if errors.As(err, &ve) {
		for _, fe := range ve.Errors {
			fmt.Println(fe.Field)
		}
	}
	fmt.Println(errors.Is(err, tenant.ErrHAMiRequiresGPUOperator))
	// Output:
	// spec.oidc.mode
	// spec.addons.hami.enabled
	// true
}

// ParseSpec reads chart values strictly: a misspelt key is an error, not a
// silently ignored setting.
func ExampleParseSpec() {
	_, err := tenant.ParseSpec([]byte("addons:\n  velero:\n    enabeld: true\n"))
	fmt.Println(err)
	fmt.Println(errors.Is(err, tenant.ErrUnknownField))

	spec, err := tenant.ParseSpec([]byte("version: v1.33\n"))
	if err != nil {
		fmt.Println(err)
		return
	}
	md0 := spec.WithDefaults().NodeGroups["md0"]
	fmt.Println(md0.InstanceType, md0.DiskSize, *md0.MaxReplicas, md0.Roles)
	// Output:
	// tenant: spec.addons.velero.enabeld: unknown field
	// true
	// u1.medium 20Gi 10 [ingress-nginx]
}

// Which tenant's etcd and SeaweedFS serve a nested tenant: each service
// comes from the nearest tenant up the hierarchy that runs it.
func ExampleTenant_Resolve() {
	root := tenant.RootServices(tenant.TenantSpec{Etcd: true, SeaweedFS: true}, "example.org")
	acme := tenant.NewTenant(ref.RootNamespace, "acme", tenant.TenantSpec{Etcd: true})
	acmeServices, _ := acme.Resolve(root)
	dev := tenant.NewTenant("tenant-acme", "dev", tenant.TenantSpec{})
	devServices, _ := dev.Resolve(acmeServices)
	ns, _ := dev.ChildNamespace()

	fmt.Println(ns)
	fmt.Println("etcd:", devServices.Etcd)
	fmt.Println("seaweedfs:", devServices.SeaweedFS)
	fmt.Println("host:", devServices.Host)
	// Output:
	// tenant-acme-dev
	// etcd: tenant-acme
	// seaweedfs: tenant-root
	// host: dev.acme.example.org
}

// Objects read from the API may carry fields a newer Cozystack added: they
// decode, are listed, and are written back, so nothing is lost. What a user
// writes is parsed strictly instead.
func ExampleDecodeKubernetes() {
	fromAPI := []byte(`
apiVersion: apps.cozystack.io/v1alpha1
kind: Kubernetes
metadata: {name: prod, namespace: tenant-acme}
spec:
  version: v1.35
  addons: {velero: {enabled: true, schedule: daily}}
`)
	k, err := tenant.DecodeKubernetes(fromAPI)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(k.UnknownFields())
	k.Spec.Version = "v1.34"
	out, _ := k.YAML()
	fmt.Print(string(out))

	_, err = tenant.ParseKubernetes(fromAPI)
	fmt.Println(errors.Is(err, tenant.ErrUnknownField))
	// Output:
	// [spec.addons.velero.schedule]
	// apiVersion: apps.cozystack.io/v1alpha1
	// kind: Kubernetes
	// metadata:
	//   name: prod
	//   namespace: tenant-acme
	// spec:
	//   addons:
	//     velero:
	//       enabled: true
	//       schedule: daily
	//   version: v1.34
	// true
}
