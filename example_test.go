package tenantkit_test

import (
	"context"
	"fmt"

	"k8s.io/client-go/rest"

	"github.com/cozystack/tenantkit/backup"
	"github.com/cozystack/tenantkit/cozystack"
	"github.com/cozystack/tenantkit/gpushare"
	"github.com/cozystack/tenantkit/ref"
	"github.com/cozystack/tenantkit/tenant"
)

// One handle on a tenant cluster reaches every capability; this is the
// package documentation's map, compiled (it needs a management cluster to
// run, so it has no output to check).
func Example() {
	ctx := context.Background()
	mgmt := &rest.Config{Host: "https://management.example.org:6443"}
	platform := tenant.Platform{RootHost: "example.org", OIDCEnabled: true}

	cl, err := cozystack.NewCluster(mgmt, ref.Cluster{Namespace: "tenant-acme", Name: "prod"}, cozystack.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	k, err := cl.Kubernetes(ctx) // the application, typed (unknown fields kept)
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := k.Check(platform); err != nil { // the chart's render failures, as typed errors
		fmt.Println(err)
	}
	spec, _ := cl.AuthenticationSpec(ctx)                                    // → oidc.RenderAuthentication
	ledger, _ := cl.GPULedger(ctx, gpushare.Config{})                        // live HAMi accounting
	_, _ = cl.EnableVelero(ctx, "backups", "velero", backup.ValuesOptions{}) // addon values from a Bucket
	req, _ := cl.EtcdRelocation(ctx, "etcd-1", "node-d")                     // → etcdrelocate plan and executor
	fmt.Println(spec.Cluster, ledger != nil, req.Member)
}
