// Command oidc-login shows per-cluster OIDC audiences at work, with package
// oidc doing the work.
//
//	go run ./examples/oidc-login
//
// Without --kubeconfig it starts the embedded local environment with dex as
// the shared IdP and two tenant kube-apiservers (tenant-a/prod and
// tenant-b/prod), each configured with the AuthenticationConfiguration
// package oidc renders. It logs users in (password grant, and the browser
// flow with PKCE through dex's mock connector), shows that cluster A
// accepts alice's token while cluster B and A's tenant-groups gate refuse
// the others — with the reason, from oidc.Verifier — applies RBAC with the
// package and writes alice's kubeconfig.
//
// With --kubeconfig (a Cozystack management cluster) plus --namespace and
// --cluster, it reads that tenant cluster's Kubernetes application and
// platform values and renders, for real: the AuthenticationConfiguration
// Secret, the Keycloak client objects, the users' ClusterRoleBindings (as a
// plan against the tenant cluster when it answers) and the OIDC kubeconfig.
// It writes files under --out and changes nothing, unless --apply-rbac.
// --plugin=tenantkit makes the OIDC kubeconfig run tenantkit's own plugin
// (examples/oidc-credential) instead of kubelogin: the `cozystack
// kubeconfig --oidc` helper, from the cluster's real values.
//
//	oidc-login --kubeconfig mgmt.kubeconfig --namespace tenant-acme --cluster prod --out ./prod-oidc
//
// Exit codes: 0 done, 1 failed (or isolation did not hold), 2 bad command
// line, 3 cluster unreachable, 130 interrupted.
package main

import (
	"context"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/cozystack/tenantkit/cli"
	"github.com/cozystack/tenantkit/oidc"
)

type options struct {
	target    cli.Target
	out       io.Writer
	namespace string
	cluster   string
	outDir    string
	applyRBAC bool
	plugin    string
	timeout   cli.Timeout
}

func main() { cli.Main(newCommand(&options{out: os.Stdout})) }

// newCommand returns the program's command line (main runs it; the tests
// run it in process through cli.Execute).
func newCommand(o *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "oidc-login",
		Short: "Per-cluster OIDC audiences: log in, see A accept and B refuse, render every artefact",
		Long: `oidc-login demonstrates package oidc: each tenant cluster trusts the shared IdP with its own
audience (client ID <namespace>-kubernetes-<name>), so a token minted for cluster A is refused by
cluster B, and a CEL rule admits only members of the tenant's groups.

Without --kubeconfig it runs on the embedded local environment: dex and two real tenant
kube-apiservers configured with the rendered AuthenticationConfiguration.

With --kubeconfig (a Cozystack management cluster), --namespace and --cluster it renders the
AuthenticationConfiguration, Keycloak objects, RBAC bindings and OIDC kubeconfig of that tenant
cluster into --out, without changing anything (unless --apply-rbac).`,
		Example: `  oidc-login
  oidc-login --kubeconfig mgmt.kubeconfig --namespace tenant-acme --cluster prod --out ./prod-oidc`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd.Context()) },
	}
	o.target.AddFlags(cmd.Flags())
	f := cmd.Flags()
	f.StringVarP(&o.namespace, "namespace", "n", "", "tenant namespace of the cluster (with --kubeconfig)")
	f.StringVar(&o.cluster, "cluster", "", "name of the tenant Kubernetes application (with --kubeconfig)")
	f.StringVar(&o.outDir, "out", "", "directory the rendered files are written to (default: with --kubeconfig ./<namespace>-<cluster>-oidc; embedded, a temporary directory removed at the end)")
	f.BoolVar(&o.applyRBAC, "apply-rbac", false, "with --kubeconfig: apply the users' ClusterRoleBindings in the tenant cluster")
	f.StringVar(&o.plugin, "plugin", string(oidc.PluginKubelogin), "credential plugin of the OIDC kubeconfig written: kubelogin (as the chart) or tenantkit (examples/oidc-credential)")
	o.timeout.AddFlag(f)
	return cmd
}

func (o *options) run(ctx context.Context) error {
	ctx, cancel := o.timeout.Context(ctx)
	defer cancel()
	if o.plugin == "" { // the flag's default, as oidc.RenderKubeconfig reads ""
		o.plugin = string(oidc.PluginKubelogin)
	}
	for _, err := range []error{
		cli.CheckDNSLabel("--namespace", o.namespace),
		cli.CheckDNSLabel("--cluster", o.cluster),
		cli.CheckOneOf("--plugin", o.plugin, string(oidc.PluginKubelogin), string(oidc.PluginTenantkit)),
	} {
		if err != nil {
			return err
		}
	}
	if o.target.Embedded() {
		if o.namespace != "" || o.cluster != "" || o.applyRBAC {
			return cli.Usage("--namespace, --cluster and --apply-rbac need --kubeconfig")
		}
		if o.outDir == "" {
			dir, err := os.MkdirTemp("", "tenantkit-oidc-login-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			o.outDir = dir
		}
		return o.runLocal(ctx)
	}
	if o.namespace == "" || o.cluster == "" {
		return cli.Usage("--kubeconfig needs --namespace and --cluster")
	}
	if o.outDir == "" {
		o.outDir = o.namespace + "-" + o.cluster + "-oidc"
	}
	return o.runRemote(ctx)
}

// writeFile writes data under the output directory and returns its path.
func (o *options) writeFile(name string, data []byte) (string, error) {
	if err := os.MkdirAll(o.outDir, 0o700); err != nil {
		return "", err
	}
	path := filepath.Join(o.outDir, name)
	return path, os.WriteFile(path, data, 0o600)
}
