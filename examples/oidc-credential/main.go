// Command oidc-credential is tenantkit's kubectl credential plugin for
// Cozystack tenant clusters, with package oidc/credential doing the work:
// it signs the user in at the cluster's OIDC issuer with the cluster's own
// client (so the token's audience is that cluster's alone) and answers
// kubectl with the ID token.
//
// kubectl runs it from a kubeconfig's exec block (client.authentication.k8s.io/v1):
//
//	oidc-credential get-token --issuer-url=https://keycloak.example.org/realms/cozy \
//	    --client-id=tenant-acme-kubernetes-prod --scope=email --scope=groups
//
// It reads KUBERNETES_EXEC_INFO and writes the ExecCredential (token and
// expirationTimestamp) to stdout; instructions go to stderr, and the
// token goes nowhere else. A cached token is verified again on every run,
// refreshed when it expired, and only then is the user asked to sign in:
// authorization code with PKCE on http://localhost:8000 (then 18000), the
// URL printed and a browser opened only with --open-browser or
// --browser-command; or, with --grant=device-code, the device grant. 16
// kubectl commands started at once cause one sign-in.
//
//	oidc-credential logout --issuer-url=... --client-id=...
//
// removes the cached tokens (and revokes the refresh token where the
// issuer offers revocation).
//
//	oidc-credential kubeconfig --namespace tenant-acme --cluster prod \
//	    --server https://kubernetes-prod.acme.example.org --issuer-url https://keycloak.example.org/realms/cozy
//
// prints a user kubeconfig that runs this plugin (--plugin=kubelogin for
// kubectl oidc-login instead): the `cozystack kubeconfig --oidc` helper.
//
// Exit codes: 0 done, 1 failed (the issuer answered with an error, the
// sign-in was denied or timed out, kubectl runs the plugin without a
// terminal and no cached token is left), 2 bad command line or
// configuration (checked before the issuer is contacted), 3 issuer
// unreachable, 130 interrupted by the user (Ctrl-C: not counted as a failed
// sign-in).
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/cozystack/tenantkit/cli"
	"github.com/cozystack/tenantkit/oidc/credential"
)

func main() { cli.Main(newCommand(os.Stdout, os.Stderr)) }

// newCommand returns the program's command line; stdout receives only
// the ExecCredential (get-token) or the kubeconfig (kubeconfig).
func newCommand(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "oidc-credential",
		Short: "kubectl credential plugin: the ID token of a tenant cluster's own OIDC client",
		Long: `oidc-credential signs a kubectl user in at a Cozystack tenant cluster's OIDC issuer with the
cluster's own public client (PKCE S256), caches the tokens per user and configuration under a
lock (parallel kubectl commands cause one sign-in), refreshes them, and answers kubectl's exec
credential protocol (client.authentication.k8s.io/v1).`,
		RunE: func(*cobra.Command, []string) error {
			return cli.Usage("a command is required: get-token, logout or kubeconfig")
		},
	}
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	cmd.AddCommand(getTokenCommand(stdout, stderr), logoutCommand(stdout, stderr), kubeconfigCommand(stdout))
	return cmd
}

// exitCode marks the plugin's errors with the exit code they mean.
func exitCode(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, credential.ErrInvalidConfig):
		return cli.WithCode(cli.ExitUsage, err)
	case errors.Is(err, credential.ErrIssuerUnreachable):
		return cli.WithCode(cli.ExitUnavailable, err)
	case errors.Is(err, credential.ErrInterrupted):
		return cli.WithCode(cli.ExitInterrupted, err)
	case errors.Is(err, credential.ErrInteractionRequired):
		return cli.WithCode(cli.ExitFailure, fmt.Errorf("%w (kubectl runs the plugin without a terminal: spec.interactive is false in KUBERNETES_EXEC_INFO)", err))
	}
	return err // a timeout, an issuer that answered with an error, a denied sign-in: ExitFailure
}
