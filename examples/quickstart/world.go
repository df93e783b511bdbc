package main

import (
	"context"
	"io"

	"github.com/cozystack/tenantkit/cli"
	"github.com/cozystack/tenantkit/cozystack"
	"github.com/cozystack/tenantkit/cozystack/cozystacktest"
	"github.com/cozystack/tenantkit/localenv"
	"github.com/cozystack/tenantkit/oidc"
)

// world is what the embedded story runs on: a management cluster with four
// simulated nodes, the Cozystack platform faked by package tenanttest, dex
// standing in for the platform's Keycloak, and — once the tenant step has
// run — one Kubernetes cluster in each of two tenants.
type world struct {
	env      *localenv.Env
	out      io.Writer
	progress io.Writer

	platform *cozystacktest.Platform
	dex      *localenv.Dex
	clusters []*tenantCluster // A (tenant alpha), B (tenant beta)
}

// tenantCluster is one tenant cluster: the package tenant handle, and the
// apiserver that stands in for its Kamaji control plane.
type tenantCluster struct {
	*cozystack.Cluster
	user     string // the cluster's admin user, in the IdP
	api      *localenv.APIServer
	verifier *oidc.Verifier // checks tokens as api does, and says why not
}

// nodes are the management cluster's simulated nodes: the tenant etcd
// takes three, the fourth is where a replica moves.
var nodes = []localenv.NodeConfig{{Name: "node-a"}, {Name: "node-b"}, {Name: "node-c"}, {Name: "node-d"}}

// runEmbedded plays the story on the embedded local environment. The
// management cluster starts as a control plane; the simulated cluster
// (controller manager, scheduler, nodes) joins it for the etcd step, the
// only one that needs it, so that on a first run the story does not wait
// for every server to build (see buildPhases).
func (o *options) runEmbedded(ctx context.Context) error {
	o.target.Out = o.progress
	stopBuilds, err := localenv.BuildAhead(ctx, cli.Lines(o.progress), buildPhases...)
	if err != nil {
		return err
	}
	defer stopBuilds()
	cfg := localenv.Config{EtcdMembers: 1, APIServer: localenv.APIServerConfig{ServiceAccountAdmission: true}}
	env, err := localenv.OpenTarget(ctx, &o.target, "etcd, kube-apiserver", cfg)
	if err != nil {
		return err
	}
	defer o.target.Close()
	w := &world{env: env, out: o.out, progress: o.progress}
	_, err = play(ctx, o.out, w.steps())
	return err
}

func (w *world) steps() []step {
	return []step{
		{capability: "tenant", title: "tenants alpha and beta, a Kubernetes cluster each", run: w.tenants, required: true},
		{capability: "oidc", title: "a user of cluster A is accepted by A and rejected by B", run: w.oidc},
		{capability: "gpu", title: "pods placed by HAMi's rules, and the ledger of cluster A", run: w.gpu},
		{capability: "backup", title: "a namespace of cluster A backed up to S3, verified, deleted, restored", run: w.backup},
		{capability: "etcd", title: "a replica of tenant alpha's etcd moved to another node under write load", run: w.etcd},
	}
}

// step starts a progress line on the progress writer.
func (w *world) step(what string) *cli.Progress { return cli.Step(w.progress, what) }
