// Package oidc gives each Cozystack tenant Kubernetes cluster its own OIDC
// audience: a token minted for cluster A is rejected by cluster B's
// apiserver, with one shared Keycloak realm or a bring-your-own issuer.
//
// It renders everything a cluster needs (the apiserver
// AuthenticationConfiguration, Keycloak client objects, the user's
// kubeconfig and RBAC bindings) and verifies tokens exactly as
// kube-apiserver does.
//
// # Names
//
// A [Cluster] is a Kubernetes application (Name) in a tenant namespace.
// Every name Cozystack uses derives from it: the client ID and audience
// "<namespace>-kubernetes-<name>" ([Cluster.ClientID]), the audience scope,
// the Secrets holding the configuration and the kubeconfig, the tenant
// groups (<namespace>-view, -use, -admin, -super-admin).
//
// # The apiserver side
//
// [RenderAuthentication] turns a mode (None, System, CustomConfig) into the
// AuthenticationConfiguration file, its Secret, the --authentication-config
// flag and the volume that mounts it. It uses k8s.io/apiserver's own types
// and validation (CEL included), emits apiserver.config.k8s.io/v1 for
// Kubernetes 1.34 and later and v1beta1 for 1.30 to 1.33, and refuses what
// Cozystack's chart refuses:
//
//	auth, err := oidc.RenderAuthentication(oidc.AuthenticationSpec{
//		Cluster:  oidc.Cluster{Namespace: "tenant-acme", Name: "prod"},
//		Mode:     oidc.ModeSystem,
//		RootHost: "example.org",
//	})
//	// auth.Secret, auth.APIServerArgs, auth.Volume, auth.VolumeMount
//
// In System mode the only audience is the cluster's client ID, usernames
// are the email claim and a CEL rule admits only members of the tenant
// groups ([Cluster.TenantGroupsGate]).
//
// # Verifying tokens
//
// A [Verifier] is built from one JWT authenticator entry and checks a token
// the way kube-apiserver 1.37 does: routing by the untrusted issuer,
// signature and issuer with go-oidc v3, audience (any of), exp without
// leeway, nbf with one minute, the username claim with its email_verified
// rule, groups, uid, extra, required claims and CEL rules compiled by the
// apiserver's compiler. A differential test runs it side by side with the
// apiserver's own JWT authenticator. Unlike the apiserver, which answers 401
// and logs the reason, it returns the reason:
//
//	v, err := oidc.NewVerifier(ctx, oidc.VerifierConfig{JWT: cluster.JWTAuthenticator(issuerURL, caPEM)})
//	user, err := v.Verify(ctx, token)
//	var aud *oidc.AudienceError
//	if errors.As(err, &aud) { ... } // a token for another cluster
//
// The issuer's keys are cached: a token with an unknown kid triggers a
// refetch, rate-limited (one per 10 s, bursts of three) so that random kids
// cannot storm the issuer; Cache-Control max-age is honoured; stale keys
// keep working while the issuer is down; rotated-out keys stop verifying
// once the cache revalidates.
//
// # The user side
//
// [Cluster.KeycloakClient] and [Cluster.KeycloakClientScope] are the EDP
// operator objects (v1.edp.epam.com/v1) for the platform realm: a public
// client with PKCE and the audience mapper. [Kubeconfig] builds the user's
// kubeconfig with client-go's types and an exec block for kubectl
// oidc-login. [PlanRBAC] compares the ClusterRoleBindings users need
// (admin: cluster-admin, view: view) with what a cluster has; the plan is a
// printable value, [RBACPlan.Apply] carries it out and [SyncRBAC] does both.
//
// # Errors
//
// Configuration problems wrap [ErrInvalidConfig] (a [*ConfigError] lists the
// apiserver's field errors) or one of the chart's refusals
// ([ErrCustomConfigAmbiguous], [ErrLegacyOIDCFlag], ...). Every token
// rejection wraps one reason — [ErrExpired], [ErrAudienceMismatch],
// [ErrRuleFailed], [ErrUnknownKey], ... — and the *XError types carry the
// details (want and got, the expiry, the rule and its message). No error
// contains a token.
//
// # Testing
//
// Package oidctest is an OpenID provider in memory: an HTTPS issuer with
// discovery and JWKS, key rotation and outages, and a corpus of bad tokens
// with the reason each must be refused for. For a real IdP, the local
// environment runs dex (internal/localenv); the package's own integration
// test starts dex and two kube-apiservers configured by RenderAuthentication
// and checks isolation, the tenant gate and RBAC end to end. Integration
// tests are skipped with -short.
package oidc
