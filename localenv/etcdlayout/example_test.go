package etcdlayout_test

import (
	"fmt"

	"github.com/cozystack/tenantkit/localenv/etcdlayout"
)

// The names a tenant etcd's members go by in the v1alpha1 layout.
func Example_names() {
	ns := etcdlayout.Namespace("demo")
	for i := range 3 {
		fmt.Println(etcdlayout.PodName(i), etcdlayout.PVCName(i), etcdlayout.StatefulSetPeerURL(ns, i))
	}
	// Output:
	// etcd-0 data-etcd-0 https://etcd-0.etcd-headless.tenant-demo.svc:2380
	// etcd-1 data-etcd-1 https://etcd-1.etcd-headless.tenant-demo.svc:2380
	// etcd-2 data-etcd-2 https://etcd-2.etcd-headless.tenant-demo.svc:2380
}

// NewV1alpha1 builds the layout as values: a dry run prints it.
func ExampleNewV1alpha1() {
	l, err := etcdlayout.NewV1alpha1(etcdlayout.Config{Tenant: "demo"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(l.StatefulSet.Namespace, l.StatefulSet.Name, *l.StatefulSet.Spec.Replicas, l.StatefulSet.Spec.ServiceName)
	fmt.Println(l.ClusterState.Data["ETCD_INITIAL_CLUSTER_STATE"], l.ClusterState.Data["ETCD_INITIAL_CLUSTER_TOKEN"])
	fmt.Println(l.PDB.Spec.MinAvailable)
	for _, s := range l.Secrets {
		fmt.Print(s.Name, " ")
	}
	fmt.Println()
	// Output:
	// tenant-demo etcd 3 etcd-headless
	// new etcd-tenant-demo
	// 2
	// etcd-ca-tls etcd-peer-ca-tls etcd-server-tls etcd-peer-tls etcd-client-tls
}
