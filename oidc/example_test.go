package oidc_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/cozystack/tenantkit/oidc"
	"github.com/cozystack/tenantkit/oidc/oidctest"
	"github.com/cozystack/tenantkit/ref"
	"github.com/cozystack/tenantkit/tenant"
)

// Every name Cozystack derives for a tenant cluster's OIDC objects.
func ExampleCluster() {
	c := ref.Cluster{Namespace: "tenant-acme", Name: "prod"}
	fmt.Println(c.ClientID())
	fmt.Println(c.AudienceScope())
	fmt.Println(c.OIDCAuthnConfigSecret(), ref.OIDCAuthnConfigKey)
	fmt.Println(c.OIDCKubeconfigSecret(), ref.OIDCKubeconfigKey)
	fmt.Println(oidc.SystemIssuerURL("example.org"))
	// Output:
	// tenant-acme-kubernetes-prod
	// tenant-acme-kubernetes-prod-audience
	// kubernetes-prod-oidc-authn-config config.yaml
	// kubernetes-prod-oidc-kubeconfig kubeconfig
	// https://keycloak.example.org/realms/cozy
}

// Render the apiserver configuration of System mode: the platform realm,
// the cluster's own audience and the tenant groups gate, in the chart's
// exact text. The result has passed the apiserver's validation.
func ExampleRenderAuthentication() {
	auth, err := oidc.RenderAuthentication(oidc.AuthenticationSpec{
		Cluster:           ref.Cluster{Namespace: "tenant-acme", Name: "prod"},
		OIDC:              tenant.OIDC{Mode: tenant.OIDCSystem},
		RootHost:          "example.org",
		KubernetesVersion: "v1.35",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(auth.APIServerArgs[0])
	fmt.Printf("Secret %s/%s key %s:\n%s", auth.Secret.Namespace, auth.Secret.Name, ref.OIDCAuthnConfigKey, auth.YAML)
	// Output:
	// --authentication-config=/etc/kubernetes/authentication-config/config.yaml
	// Secret tenant-acme/kubernetes-prod-oidc-authn-config key config.yaml:
	// apiVersion: apiserver.config.k8s.io/v1beta1
	// kind: AuthenticationConfiguration
	// jwt:
	// - issuer:
	//     url: https://keycloak.example.org/realms/cozy
	//     audiences:
	//     - tenant-acme-kubernetes-prod
	//   claimValidationRules:
	//   - expression: 'has(claims.groups) && dyn(claims.groups).exists(g, g in ["tenant-acme-view", "tenant-acme-use", "tenant-acme-admin", "tenant-acme-super-admin"])'
	//     message: "user is not a member of any tenant-acme-{view,use,admin,super-admin} group in the cozy realm — this tenant's apiserver only trusts identities the tenant chart has admitted"
	//   claimMappings:
	//     username:
	//       claim: email
	//       prefix: ""
	//     groups:
	//       claim: groups
	//       prefix: ""
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

	prod := ref.Cluster{Namespace: "tenant-acme", Name: "prod"}
	v, err := oidc.NewVerifier(ctx, oidc.VerifierConfig{JWT: oidc.JWTAuthenticator(prod, iss.URL(), iss.CAPEM())})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer v.Close()

	token, _ := iss.Key().Sign(iss.Claims(prod.ClientID(), "alice@example.org", "tenant-acme-admin"))
	user, err := v.Verify(ctx, token)
	fmt.Println(user.Username, user.Groups, err)

	stage := ref.Cluster{Namespace: "tenant-acme", Name: "stage"}
	token, _ = iss.Key().Sign(iss.Claims(stage.ClientID(), "alice@example.org", "tenant-acme-admin"))
	_, err = v.Verify(ctx, token)
	var aud *oidc.AudienceError
	fmt.Println(errors.As(err, &aud), aud.Got)
	fmt.Println(err)

	token, _ = iss.Key().Sign(iss.Claims(prod.ClientID(), "mallory@example.org", "tenant-other-admin"))
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

	prod := ref.Cluster{Namespace: "tenant-acme", Name: "prod"}
	v, err := oidc.NewVerifier(ctx, oidc.VerifierConfig{
		JWT:                    oidc.JWTAuthenticator(prod, iss.URL(), iss.CAPEM()),
		BackgroundDiscovery:    true,
		DiscoveryRetryInterval: 10 * time.Millisecond,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer v.Close()

	token, _ := iss.Key().Sign(iss.Claims(prod.ClientID(), "alice@example.org", "tenant-acme-admin"))
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
	prod := ref.Cluster{Namespace: "tenant-acme", Name: "prod"}
	v, err := oidc.NewVerifier(ctx, oidc.VerifierConfig{
		JWT:        oidc.JWTAuthenticator(prod, iss.URL(), iss.CAPEM()),
		TokenCache: oidc.TokenCacheConfig{Size: 10000, MaxTTL: 10 * time.Second},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer v.Close()

	token, _ := iss.Key().Sign(iss.Claims(prod.ClientID(), "alice@example.org", "tenant-acme-admin"))
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
func ExampleRenderKubeconfig() {
	kc, err := oidc.RenderKubeconfig(oidc.KubeconfigSpec{
		Cluster:   ref.Cluster{Namespace: "tenant-acme", Name: "prod"},
		Server:    "https://kubernetes-prod.acme.example.org:443",
		IssuerURL: oidc.SystemIssuerURL("example.org"),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(string(kc.YAML))
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
	//       - --oidc-use-pkce
	//       command: kubectl
	//       env: null
	//       interactiveMode: IfAvailable
	//       provideClusterInfo: true
}

// Plan the ClusterRoleBindings for the cluster's users against what the
// cluster has (here: a binding for a user who left), print it as a dry
// run; RBAC.Execute carries it out. The clientset is a fake holding
// carol's binding; NewRBAC without one reaches the tenant cluster.
func ExampleRBAC_Plan() {
	ctx := context.Background()
	c := ref.Cluster{Namespace: "tenant-acme", Name: "prod"}
	existing, _ := oidc.Bindings(c, []tenant.OIDCUser{{Email: "carol@example.org", Role: tenant.RoleAdmin}})
	rbac, err := oidc.NewRBAC(c, oidc.RBACConfig{Clientset: fake.NewClientset(&existing[0])})
	if err != nil {
		fmt.Println(err)
		return
	}
	plan, err := rbac.Plan(ctx, []tenant.OIDCUser{
		{Email: "alice@example.org", Role: tenant.RoleAdmin},
		{Email: "bob@example.org", Role: tenant.RoleView},
	})
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

// The spec's OIDC values feed package oidc's renderer directly: no name is
// derived by hand.
func ExampleAuthenticationSpecFor() {
	k := tenant.NewKubernetes(ref.Cluster{Namespace: "tenant-acme", Name: "prod"}, tenant.KubernetesSpec{
		OIDC: tenant.OIDC{Mode: tenant.OIDCSystem, Users: []tenant.OIDCUser{{Email: "alice@acme.example", Role: tenant.RoleAdmin}}},
	})
	platform := tenant.Platform{RootHost: "example.org", OIDCEnabled: true}
	if _, err := k.Check(platform); err != nil {
		fmt.Println(err)
		return
	}
	auth, err := oidc.RenderAuthentication(oidc.AuthenticationSpecFor(k, platform))
	if err != nil {
		fmt.Println(err)
		return
	}
	jwt := auth.Config.JWT[0]
	fmt.Println(jwt.Issuer.URL)
	fmt.Println(jwt.Issuer.Audiences)
	fmt.Println(auth.Secret.Name)
	fmt.Println(auth.APIServerArgs)
	// Output:
	// https://keycloak.example.org/realms/cozy
	// [tenant-acme-kubernetes-prod]
	// kubernetes-prod-oidc-authn-config
	// [--authentication-config=/etc/kubernetes/authentication-config/config.yaml]
}
