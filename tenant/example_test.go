package tenant_test

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"

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
	k := tenant.NewKubernetes(ref.Cluster{Namespace: "tenant-acme", Name: "prod"}, spec)
	if _, err := k.Check(tenant.Platform{}); err != nil {
		fmt.Println(err)
		return
	}
	c := k.Ref()
	fmt.Println(c.Release())
	fmt.Println(c.AdminKubeconfigSecret())
	for _, r := range k.AddonReleases(tenant.LatestRelease, true) {
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

// Check reports everything the chart would refuse to render, each
// problem with its field and a sentinel to branch on.
func ExampleKubernetesSpec_Check_refusals() {
	spec := tenant.KubernetesSpec{
		OIDC:   tenant.OIDC{Mode: tenant.OIDCSystem},
		Addons: tenant.Addons{HAMi: tenant.Addon{Enabled: true}},
	}
	_, err := spec.Check(tenant.Platform{OIDCEnabled: false})
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

// ParseSpec reads chart values as the chart does: a key the model does not
// know is kept and reported as a warning (a misspelt key never silently
// disappears), while what the chart refuses of the document itself, such
// as a node group without instanceType, is an error.
func ExampleParseSpec() {
	spec, err := tenant.ParseSpec([]byte("addons:\n  velero:\n    enabeld: true\n"))
	if err != nil {
		fmt.Println(err)
		return
	}
	warnings, err := spec.Check(tenant.Platform{})
	fmt.Println(warnings)
	fmt.Println(err, warnings.Has(tenant.ErrUnknownField))

	_, err = tenant.ParseSpec([]byte("nodeGroups:\n  md0: {minReplicas: 0, maxReplicas: 3, diskSize: 20Gi}\n"))
	fmt.Println(errors.Is(err, tenant.ErrRequiredField), err)
	// Output:
	// spec.addons.velero.enabeld: unknown field: not in the model; kept and written back
	// <nil> true
	// true tenant: spec.nodeGroups.md0.instanceType: required field missing: the schema requires it and nothing supplies a default
}

// Check separates what the chart refuses (the error, with the chart's rule
// and message) from what it accepts but tenantkit warns of.
func ExampleKubernetesSpec_Check() {
	spec := tenant.KubernetesSpec{NodeGroups: map[string]tenant.NodeGroup{
		"md0": {MinReplicas: 3, MaxReplicas: new(1), InstanceType: "u1.medium", PodCPULimit: new(resource.MustParse("2"))},
	}}
	warnings, err := spec.Check(tenant.Platform{})
	for _, w := range warnings {
		fmt.Println("warning", w.Rule, w.Field)
	}
	var ve *tenant.ValidationError
	if errors.As(err, &ve) {
		for _, fe := range ve.Errors {
			fmt.Println("error", fe.Rule, fe.Field)
		}
	}
	fmt.Println(errors.Is(err, tenant.ErrPodCPUInstanceType))
	// Output:
	// warning K-maxreplicas-below-min spec.nodeGroups.md0.maxReplicas
	// error T-podcpu-limit-instancetype spec.nodeGroups.md0.podCpuLimit
	// true
}

// The four keys the chart requires in every node group are always
// written, so that what tenantkit writes the chart accepts.
func ExampleKubernetesSpec_YAML() {
	spec := tenant.KubernetesSpec{NodeGroups: map[string]tenant.NodeGroup{"md0": {InstanceType: "u1.large"}}}
	out, _ := spec.YAML()
	fmt.Print(string(out))
	// Output:
	// nodeGroups:
	//   md0:
	//     diskSize: 20Gi
	//     instanceType: u1.large
	//     maxReplicas: 10
	//     minReplicas: 0
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
// decode, are listed, and are written back, so nothing is lost.
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
}

// Check mirrors one Cozystack release's chart; Platform.Release picks it
// (zero is LatestRelease). The FluxCD addon left the chart on 2026-08-20:
// the release before still knows it, the newest warns of an unknown field.
func ExamplePlatform_release() {
	spec, err := tenant.ParseSpec([]byte("addons:\n  fluxcd:\n    enabled: true\n"))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, release := range []tenant.Release{tenant.Release20260819, tenant.LatestRelease} {
		warnings, err := spec.Check(tenant.Platform{Release: release})
		fmt.Println(release, len(warnings), err)
		for _, w := range warnings {
			fmt.Println("  warning", w.Rule, w.Field)
		}
	}
	// Output:
	// main-2026-08-19 0 <nil>
	// main-2026-08-21 1 <nil>
	//   warning K-unknown-field spec.addons.fluxcd
}
