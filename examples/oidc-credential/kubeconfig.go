package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/cozystack/tenantkit/cli"
	"github.com/cozystack/tenantkit/oidc"
)

func kubeconfigCommand(stdout io.Writer) *cobra.Command {
	var (
		spec                 oidc.KubeconfigSpec
		caFile, issuerCAFile string
		plugin               string
	)
	cmd := &cobra.Command{
		Use:   "kubeconfig",
		Short: "Print a user kubeconfig of a tenant cluster whose credentials come from this plugin (or kubelogin)",
		Example: `  oidc-credential kubeconfig --namespace tenant-acme --cluster prod \
      --server https://kubernetes-prod.acme.example.org --issuer-url https://keycloak.example.org/realms/cozy > prod.kubeconfig`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if spec.Cluster.Namespace == "" || spec.Cluster.Name == "" {
				return cli.Usage("--namespace and --cluster are required")
			}
			if spec.Server == "" || spec.IssuerURL == "" {
				return cli.Usage("--server and --issuer-url are required")
			}
			for _, err := range []error{
				cli.CheckDNSLabel("--namespace", spec.Cluster.Namespace),
				cli.CheckDNSLabel("--cluster", spec.Cluster.Name),
				cli.CheckHTTPSURL("--server", spec.Server),
				cli.CheckHTTPSURL("--issuer-url", spec.IssuerURL),
				cli.CheckOneOf("--plugin", plugin, string(oidc.PluginTenantkit), string(oidc.PluginKubelogin)),
			} {
				if err != nil {
					return err
				}
			}
			var err error
			if spec.CertificateAuthority, err = cli.ReadPEMCertificates("--certificate-authority", caFile); err != nil {
				return err
			}
			if spec.IssuerCertificateAuthority, err = cli.ReadPEMCertificates("--issuer-certificate-authority", issuerCAFile); err != nil {
				return err
			}
			spec.Plugin = oidc.Plugin(plugin)
			kc, err := oidc.RenderKubeconfig(spec)
			if err != nil {
				return cli.WithCode(cli.ExitUsage, err)
			}
			_, err = stdout.Write(kc.YAML)
			return err
		},
	}
	f := cmd.Flags()
	f.StringVarP(&spec.Cluster.Namespace, "namespace", "n", "", "tenant namespace of the cluster (required)")
	f.StringVar(&spec.Cluster.Name, "cluster", "", "name of the tenant Kubernetes application (required)")
	f.StringVar(&spec.Server, "server", "", "the cluster's apiserver URL (required)")
	f.StringVar(&caFile, "certificate-authority", "", "file with the apiserver's CA (PEM; default system roots)")
	f.StringVar(&spec.IssuerURL, "issuer-url", "", "the OIDC issuer the cluster trusts (required)")
	f.StringVar(&issuerCAFile, "issuer-certificate-authority", "", "file with the issuer's CA (PEM; default system roots)")
	f.StringVar(&spec.ClientID, "client-id", "", "client ID, the cluster's audience (default <namespace>-kubernetes-<cluster>)")
	f.StringArrayVar(&spec.ExtraScopes, "scope", nil, "scope besides openid, repeatable (default email, groups)")
	f.StringVar(&plugin, "plugin", string(oidc.PluginTenantkit), "credential plugin: tenantkit (this program) or kubelogin (kubectl oidc-login)")
	f.StringVar(&spec.Command, "command", "", "plugin command in the exec block (default oidc-credential, or kubectl for kubelogin)")
	f.StringArrayVar(&spec.ExtraArgs, "plugin-arg", nil, "extra argument of the plugin, repeatable (e.g. --plugin-arg=--grant=device-code)")
	return cmd
}
