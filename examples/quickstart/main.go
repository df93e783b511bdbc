// Command quickstart runs the whole tenantkit story with one command, each
// capability a short step calling the library:
//
//	go run ./examples/quickstart     # or: make demo
//
// On the embedded local environment — real etcd, kube-apiservers, a
// controller manager and scheduler with simulated nodes, dex, an S3 server
// and Velero, all on loopback — it plays the story end to end:
//
//  1. tenant: the Cozystack platform (application CRDs, tenant namespaces,
//     dex as its IdP), tenants alpha and beta with a Kubernetes cluster
//     each, validated and applied with package tenant, and each cluster's
//     apiserver started with the AuthenticationConfiguration package oidc
//     renders for it, its admin kubeconfig published as Kamaji does;
//  2. oidc: a user of cluster A is accepted by A and rejected by B, and
//     the users in A's spec get their ClusterRoleBindings;
//  3. gpu: GPU nodes registered as HAMi's device plugin does, pods placed
//     by HAMi's rules (package gpushare), and the ledger of cluster A;
//  4. backup: a namespace of cluster A backed up with Velero to an S3
//     Bucket, the backup verified straight from S3, the namespace deleted
//     and restored identical (package backup);
//  5. etcd: a replica of tenant alpha's etcd moved to another node under a
//     steady write load, with no acknowledged write lost (package
//     etcdrelocate).
//
// It ends with a summary table (capability, result, time) and exits 1 if
// any capability failed. The first run on a machine builds the servers
// from their pinned Go modules and caches them: in the order the story
// needs them, in the background, each reported on a progress line, so the
// first capabilities play while Velero and the controllers still build.
// Later runs start in seconds. Binaries named by TENANTKIT_<NAME>_BIN or
// envtest's KUBEBUILDER_ASSETS are used instead of builds (see package
// localenv).
//
// With --kubeconfig (a Cozystack management cluster) plus --namespace and
// --cluster it makes the same tour read-only on a real tenant cluster: the
// application read and checked against its platform, its OIDC artefacts
// rendered, its GPU ledger, its Velero backups listed, its tenant etcd
// observed. It changes nothing.
//
//	quickstart --kubeconfig mgmt.kubeconfig --namespace tenant-acme --cluster prod
//
// Exit codes: 0 every capability passed, 1 one failed, 2 bad command line,
// 3 the environment or cluster could not be reached, 130 interrupted.
package main

import (
	"context"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/cozystack/tenantkit/cli"
	"github.com/cozystack/tenantkit/etcdrelocate"
)

type options struct {
	target    cli.Target
	out       io.Writer // results
	progress  io.Writer // progress lines
	namespace string
	cluster   string
	timeout   cli.Timeout

	// etcdDial reaches tenant etcd members with --kubeconfig. Default: a
	// port-forward through the management cluster's API.
	etcdDial etcdrelocate.DialFunc
}

func main() { cli.Main(newCommand(&options{out: os.Stdout, progress: os.Stderr})) }

// newCommand returns the program's command line (main runs it; the tests
// run it in process through cli.Execute).
func newCommand(o *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "quickstart",
		Short: "The whole tenantkit story: tenant, OIDC, GPU sharing, backup, etcd relocation",
		Long: `quickstart plays every tenantkit capability end to end and prints a summary table.

Without --kubeconfig it runs on the embedded local environment (real servers on
loopback, nothing to install):
  tenant   tenants alpha and beta, a Kubernetes cluster each, validated and applied
  oidc     a user of cluster A is accepted by A and rejected by B
  gpu      pods placed by HAMi's rules, and the GPU ledger
  backup   a namespace backed up to S3 with Velero, verified, deleted, restored
  etcd     an etcd replica moved to another node under write load, no write lost

With --kubeconfig (a Cozystack management cluster), --namespace and --cluster it
checks that tenant cluster read-only: the application against its platform,
the OIDC artefacts rendered, the GPU ledger (HAMi on), the Velero backups
(Velero on), the tenant etcd's members. It changes nothing.

The first run builds the servers of the embedded environment in the order the
story needs them, in the background while the first steps play, and caches
them; later runs start in seconds.`,
		Example: `  quickstart
  quickstart --kubeconfig mgmt.kubeconfig --namespace tenant-acme --cluster prod`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd.Context()) },
	}
	o.target.AddFlags(cmd.Flags())
	f := cmd.Flags()
	f.StringVarP(&o.namespace, "namespace", "n", "", "with --kubeconfig: tenant namespace of the cluster (e.g. tenant-acme)")
	f.StringVar(&o.cluster, "cluster", "", "with --kubeconfig: name of the tenant's Kubernetes application")
	o.timeout.AddFlag(f)
	return cmd
}

func (o *options) run(ctx context.Context) error {
	ctx, cancel := o.timeout.Context(ctx)
	defer cancel()
	for _, err := range []error{
		cli.CheckDNSLabel("--namespace", o.namespace),
		cli.CheckDNSLabel("--cluster", o.cluster),
	} {
		if err != nil {
			return err
		}
	}
	if o.target.Embedded() {
		if o.namespace != "" || o.cluster != "" {
			return cli.Usage("--namespace and --cluster need --kubeconfig")
		}
		return o.runEmbedded(ctx)
	}
	if o.namespace == "" || o.cluster == "" {
		return cli.Usage("--kubeconfig needs --namespace and --cluster")
	}
	return o.runRemote(ctx)
}
