package localenv_test

import (
	"context"
	"fmt"
	"log"

	"github.com/cozystack/tenantkit/localenv"
	"github.com/cozystack/tenantkit/oidc"
	"github.com/cozystack/tenantkit/ref"
	"github.com/cozystack/tenantkit/tenant"
)

// A kind cluster whose apiserver trusts dex as a tenant cluster's trusts
// its issuer: the cluster starts without issuers, dex listens on this
// host's address on the cluster's network (which the node reaches), and
// the configuration package oidc renders for dex replaces the first one.
// The apiserver has loaded it when SetKindAuthenticationConfig returns.
// It creates a kind cluster, so it is compiled but not run by go test.
func ExampleEnv_SetKindAuthenticationConfig() {
	ctx := context.Background()
	env, err := localenv.Start(ctx, localenv.Config{Provider: localenv.Kind, KindCluster: localenv.KindConfig{
		AuthenticationConfig: []byte("apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\n")}})
	if err != nil {
		log.Fatal(err)
	}
	defer env.Stop()
	c := ref.Cluster{Namespace: "tenant-acme", Name: "prod"}
	dex, err := env.StartDex(ctx, localenv.DexConfig{Clients: []string{c.ClientID()},
		Users: []localenv.DexUser{{Email: "alice@acme.example", Password: "secret", Groups: []string{"tenant-acme-admin"}}}})
	if err != nil {
		log.Fatal(err)
	}
	auth, err := oidc.RenderAuthentication(oidc.AuthenticationSpec{Cluster: c, OIDC: tenant.OIDC{Mode: tenant.OIDCSystem},
		IssuerURL: dex.IssuerURL, CertificateAuthority: dex.CAPEM, NewestAPIVersion: true})
	if err != nil {
		log.Fatal(err)
	}
	if err := env.SetKindAuthenticationConfig(ctx, auth.YAML); err != nil {
		log.Fatal(err)
	}
	token, err := dex.PasswordToken(ctx, "alice@acme.example", "secret", c.ClientID())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("bearer token for", env.RESTConfig().Host, len(token) > 0)
}
