package credential_test

import (
	"context"
	"fmt"
	"os"

	"github.com/cozystack/tenantkit/oidc/credential"
)

// A kubectl credential plugin in a few lines: the cluster's token, from
// the cache, a refresh or a sign-in, written as the ExecCredential kubectl
// reads on stdout. It runs under kubectl (KUBERNETES_EXEC_INFO) against a
// live issuer and a browser, so it is compiled but not run by go test and
// has no output to check; ExampleConfig_Args below does.
func ExampleGet() {
	ctx := context.Background()
	if _, err := credential.ReadExecInfo(); err != nil {
		fmt.Fprintln(os.Stderr, err) // not client.authentication.k8s.io/v1
		return
	}
	tok, err := credential.Get(ctx, credential.Config{
		IssuerURL: "https://keycloak.example.org/realms/cozy",
		ClientID:  "tenant-acme-kubernetes-prod", // the cluster's client: its audience
		Browser:   credential.CommandBrowser("xdg-open"),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err) // typed: errors.Is(err, credential.ErrIssuerUnreachable), ...
		return
	}
	_ = credential.WriteExecCredential(os.Stdout, tok)
}

// The plugin's arguments for a kubeconfig's exec block.
func ExampleConfig_Args() {
	cfg := credential.Config{IssuerURL: "https://keycloak.example.org/realms/cozy", ClientID: "tenant-acme-kubernetes-prod",
		Grant: credential.GrantDeviceCode}
	fmt.Println(append([]string{"oidc-credential", "get-token"}, cfg.Args()...))
	// Output: [oidc-credential get-token --issuer-url=https://keycloak.example.org/realms/cozy --client-id=tenant-acme-kubernetes-prod --scope=email --scope=groups --grant=device-code]
}
