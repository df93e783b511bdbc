package oidc_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/cozystack/tenantkit/oidc"
	"github.com/cozystack/tenantkit/oidc/oidctest"
)

// Every name Cozystack derives for a tenant cluster's OIDC objects.
func ExampleCluster() {
	c := oidc.Cluster{Namespace: "tenant-acme", Name: "prod"}
	fmt.Println(c.ClientID())
	fmt.Println(c.AudienceScope())
	fmt.Println(c.AuthnConfigSecret(), oidc.AuthnConfigKey)
	fmt.Println(c.KubeconfigSecret(), oidc.KubeconfigKey)
	fmt.Println(oidc.SystemIssuerURL("example.org"))
	// Output:
	// tenant-acme-kubernetes-prod
	// tenant-acme-kubernetes-prod-audience
	// kubernetes-prod-oidc-authn-config config.yaml
	// kubernetes-prod-oidc-kubeconfig kubeconfig
	// https://keycloak.example.org/realms/cozy
}

// Render the apiserver configuration of System mode: the platform realm,
// the cluster's own audience and the tenant groups gate. The result has
// passed the apiserver's validation.
func ExampleRenderAuthentication() {
	auth, err := oidc.RenderAuthentication(oidc.AuthenticationSpec{
		Cluster:           oidc.Cluster{Namespace: "tenant-acme", Name: "prod"},
		Mode:              oidc.ModeSystem,
		RootHost:          "example.org",
		KubernetesVersion: "v1.35",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(auth.APIServerArgs[0])
	fmt.Printf("Secret %s/%s key %s:\n%s", auth.Secret.Namespace, auth.Secret.Name, oidc.AuthnConfigKey, auth.YAML)
	// Output:
	// --authentication-config=/etc/kubernetes/authentication-config/config.yaml
	// Secret tenant-acme/kubernetes-prod-oidc-authn-config key config.yaml:
	// apiVersion: apiserver.config.k8s.io/v1
	// jwt:
	// - claimMappings:
	//     groups:
	//       claim: groups
	//       prefix: ""
	//     username:
	//       claim: email
	//       prefix: ""
	//   claimValidationRules:
	//   - expression: has(claims.groups) && dyn(claims.groups).exists(g, g in ["tenant-acme-view","tenant-acme-use","tenant-acme-admin","tenant-acme-super-admin"])
	//     message: user must be a member of one of the tenant groups tenant-acme-view, tenant-acme-use,
	//       tenant-acme-admin, tenant-acme-super-admin
	//   issuer:
	//     audiences:
	//     - tenant-acme-kubernetes-prod
	//     url: https://keycloak.example.org/realms/cozy
	// kind: AuthenticationConfiguration
}

// Check tokens as the cluster's apiserver will, and learn why one is
// refused: here a token minted for another cluster of the same tenant.
func ExampleVerifier() {
	ctx := context.Background()
	iss, err := oidctest.Start(oidctest.Config{}) // an IdP in memory
	if err != nil {
		fmt.Println(err)
		return
	}
	defer iss.Close()

	prod := oidc.Cluster{Namespace: "tenant-acme", Name: "prod"}
	v, err := oidc.NewVerifier(ctx, oidc.VerifierConfig{JWT: prod.JWTAuthenticator(iss.URL(), iss.CAPEM())})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer v.Close()

	token, _ := iss.SignClaims(iss.Claims(prod.ClientID(), "alice@example.org", "tenant-acme-admin"))
	user, err := v.Verify(ctx, token)
	fmt.Println(user.Username, user.Groups, err)

	stage := oidc.Cluster{Namespace: "tenant-acme", Name: "stage"}
	token, _ = iss.SignClaims(iss.Claims(stage.ClientID(), "alice@example.org", "tenant-acme-admin"))
	_, err = v.Verify(ctx, token)
	var aud *oidc.AudienceError
	fmt.Println(errors.As(err, &aud), aud.Got)
	fmt.Println(err)

	token, _ = iss.SignClaims(iss.Claims(prod.ClientID(), "mallory@example.org", "tenant-other-admin"))
	_, err = v.Verify(ctx, token)
	fmt.Println(errors.Is(err, oidc.ErrRuleFailed))
	// Output:
	// alice@example.org [tenant-acme-admin] <nil>
	// true [tenant-acme-kubernetes-stage]
	// oidc: token audience ["tenant-acme-kubernetes-stage"], want one of ["tenant-acme-kubernetes-prod"]
	// true
}

// Start before the IdP is up, as kube-apiserver does: tokens are refused
// as not ready until discovery, retried in the background, succeeds.
func ExampleVerifierConfig_backgroundDiscovery() {
	ctx := context.Background()
	iss, err := oidctest.Start(oidctest.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer iss.Close()
	iss.SetDown(true)

	prod := oidc.Cluster{Namespace: "tenant-acme", Name: "prod"}
	v, err := oidc.NewVerifier(ctx, oidc.VerifierConfig{
		JWT:                    prod.JWTAuthenticator(iss.URL(), iss.CAPEM()),
		BackgroundDiscovery:    true,
		DiscoveryRetryInterval: 10 * time.Millisecond,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer v.Close()

	token, _ := iss.SignClaims(iss.Claims(prod.ClientID(), "alice@example.org", "tenant-acme-admin"))
	_, err = v.Verify(ctx, token)
	fmt.Println(errors.Is(err, oidc.ErrNotReady))

	iss.SetDown(false)
	for v.Ready() != nil {
		time.Sleep(5 * time.Millisecond)
	}
	user, err := v.Verify(ctx, token)
	fmt.Println(user.Username, err)
	// Output:
	// true
	// alice@example.org <nil>
}

// A repeated token is answered from the cache until its exp, MaxTTL or a
// change of the issuer's keys.
func ExampleTokenCacheConfig() {
	ctx := context.Background()
	iss, err := oidctest.Start(oidctest.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer iss.Close()
	prod := oidc.Cluster{Namespace: "tenant-acme", Name: "prod"}
	v, err := oidc.NewVerifier(ctx, oidc.VerifierConfig{
		JWT:        prod.JWTAuthenticator(iss.URL(), iss.CAPEM()),
		TokenCache: oidc.TokenCacheConfig{Size: 10000, MaxTTL: 10 * time.Second},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer v.Close()

	token, _ := iss.SignClaims(iss.Claims(prod.ClientID(), "alice@example.org", "tenant-acme-admin"))
	for range 3 { // verified once, then answered from the cache
		user, err := v.Verify(ctx, token)
		fmt.Println(user.Username, err)
	}
	// Output:
	// alice@example.org <nil>
	// alice@example.org <nil>
	// alice@example.org <nil>
}

// The kubeconfig a user downloads: the apiserver and an exec block for
// kubectl oidc-login with the cluster's client ID and PKCE.
func ExampleKubeconfigYAML() {
	data, err := oidc.KubeconfigYAML(oidc.KubeconfigSpec{
		Cluster:   oidc.Cluster{Namespace: "tenant-acme", Name: "prod"},
		Server:    "https://kubernetes-prod.acme.example.org:443",
		IssuerURL: oidc.SystemIssuerURL("example.org"),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(string(data))
	// Output:
	// apiVersion: v1
	// clusters:
	// - cluster:
	//     server: https://kubernetes-prod.acme.example.org:443
	//   name: kubernetes-prod
	// contexts:
	// - context:
	//     cluster: kubernetes-prod
	//     user: kubernetes-prod-oidc
	//   name: kubernetes-prod
	// current-context: kubernetes-prod
	// kind: Config
	// users:
	// - name: kubernetes-prod-oidc
	//   user:
	//     exec:
	//       apiVersion: client.authentication.k8s.io/v1
	//       args:
	//       - oidc-login
	//       - get-token
	//       - --oidc-issuer-url=https://keycloak.example.org/realms/cozy
	//       - --oidc-client-id=tenant-acme-kubernetes-prod
	//       - --oidc-extra-scope=email
	//       - --oidc-extra-scope=groups
	//       - --oidc-pkce-method=S256
	//       command: kubectl
	//       env: null
	//       installHint: 'kubectl oidc-login is required: kubectl krew install oidc-login
	//         (https://github.com/int128/kubelogin)'
	//       interactiveMode: IfAvailable
	//       provideClusterInfo: true
}

// Plan the ClusterRoleBindings for the cluster's users against what the
// cluster has (here: a binding for a user who left), print it as a dry
// run; plan.Apply(ctx, clientset) carries it out.
func ExamplePlanRBAC() {
	c := oidc.Cluster{Namespace: "tenant-acme", Name: "prod"}
	existing, _ := c.Bindings([]oidc.User{{Email: "carol@example.org", Role: oidc.RoleAdmin}})
	plan, err := oidc.PlanRBAC(c, []oidc.User{
		{Email: "alice@example.org", Role: oidc.RoleAdmin},
		{Email: "bob@example.org", Role: oidc.RoleView},
	}, []rbacv1.ClusterRoleBinding(existing))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(plan)
	// Output:
	// create  cozystack-oidc-8a64bbdb80d70d82 alice@example.org -> cluster-admin
	// create  cozystack-oidc-dd14d71a9c1c7840 bob@example.org -> view
	// delete  cozystack-oidc-ddced385e22cb0ee carol@example.org -> cluster-admin
}
