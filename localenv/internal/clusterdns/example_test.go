package clusterdns_test

import (
	"context"
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/cozystack/tenantkit/localenv/internal/clusterdns"
)

// A headless service's pods resolve by their hostnames, in the short form
// the etcd layouts use and fully qualified.
func Example() {
	ready, host := true, "etcd-0"
	cs := fake.NewClientset(
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "etcd-headless", Namespace: "tenant-demo"},
			Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone}},
		&discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Name: "etcd-headless-abcde", Namespace: "tenant-demo", Labels: map[string]string{discoveryv1.LabelServiceName: "etcd-headless"}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.40.1.2"}, Hostname: &host, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}},
		},
	)
	ctx := context.Background()
	srv, err := clusterdns.Start(ctx, clusterdns.Config{Client: cs, Addr: netip.MustParseAddr("127.0.0.1")})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Stop()
	for _, name := range []string{"etcd-0.etcd-headless.tenant-demo.svc", "etcd-0.etcd-headless.tenant-demo.svc.cluster.local"} {
		addrs, err := srv.Resolver().LookupHost(ctx, name)
		fmt.Println(name, addrs, err)
	}
	// Output:
	// etcd-0.etcd-headless.tenant-demo.svc [10.40.1.2] <nil>
	// etcd-0.etcd-headless.tenant-demo.svc.cluster.local [10.40.1.2] <nil>
}
