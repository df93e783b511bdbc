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
// A tenant cluster is a ref.Cluster: a Kubernetes application (Name) in a
// tenant namespace. Package ref derives every name Cozystack uses from it:
// the client ID and audience "<namespace>-kubernetes-<name>"
// (ref.Cluster.ClientID), the audience scope, the Secrets holding the
// configuration and the kubeconfig, the tenant groups (<namespace>-view,
// -use, -admin, -super-admin). The modes, users and roles are the model's
// (package tenant: tenant.OIDC, tenant.OIDCUser).
//
// # The apiserver side
//
// [RenderAuthentication] turns a mode (None, System, CustomConfig; the
// application's spec.oidc, [AuthenticationSpecFor]) into the
// AuthenticationConfiguration file, its Secret, the --authentication-config
// flag and the volume that mounts it. System mode renders the chart's text
// byte for byte (apiserver.config.k8s.io/v1beta1, loaded from Kubernetes
// 1.30), checked with k8s.io/apiserver's own decoding and validation (CEL
// included); it refuses what Cozystack's chart refuses, with package
// tenant's validation errors:
//
//	auth, err := oidc.RenderAuthentication(oidc.AuthenticationSpec{
//		Cluster:  ref.Cluster{Namespace: "tenant-acme", Name: "prod"},
//		OIDC:     tenant.OIDC{Mode: tenant.OIDCSystem},
//		RootHost: "example.org",
//	})
//	// auth.Secret, auth.APIServerArgs, auth.Volume, auth.VolumeMount
//
// In System mode the only audience is the cluster's client ID, usernames
// are the email claim and a CEL rule admits only members of the tenant
// groups ([TenantGroupsGate], with the chart's [TenantGroupsMessage]);
// [JWTAuthenticator] is that entry.
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
//	v, err := oidc.NewVerifier(ctx, oidc.VerifierConfig{JWT: oidc.JWTAuthenticator(cluster, issuerURL, caPEM)})
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
// [NewKeycloakClient] and [NewKeycloakClientScope] are the EDP operator
// objects (v1.edp.epam.com/v1) for the platform realm: a public client with
// PKCE and the audience mapper. [Kubeconfig] builds the user's kubeconfig
// with client-go's types and the chart's exec block for kubectl oidc-login;
// [KubeconfigSpecFor] fills its input from the model alone, no cluster
// needed. [PlanRBAC] compares the ClusterRoleBindings users need (admin:
// cluster-admin, view: view) with what a cluster has; the plan is a
// printable value. An [RBAC] client on one tenant cluster plans from what
// the cluster has ([RBAC.Plan]), carries a plan out ([RBAC.Execute]) or
// does both ([RBAC.Sync]).
//
// # What it mirrors, and where it differs
//
// The artefacts are the chart's (packages/apps/kubernetes, at the commits
// tenant/testdata/chart/RULES.md names; the tests compare with the texts
// recorded there): templates/oidc-authn-config.yaml (the configuration
// text), oidc-keycloak.yaml (the client, with spec.name, and the scope,
// with the chart's description, neither labelled), oidc-rbac-job.yaml (one
// ClusterRoleBinding per user, named cozystack-oidc-<hash>, labelled with
// the release; the kubeconfig's cluster, context and user names and its
// exec block) and _helpers.tpl (client ID, audience scope, issuer, CEL
// gate). Deliberate differences, each with its switch:
//
//   - AuthenticationSpec.NewestAPIVersion renders System mode as
//     apiserver.config.k8s.io/v1 from Kubernetes 1.34 (the chart: v1beta1
//     always). The rule of which version loads which is package tenant's
//     (tenant.AuthenticationConfigLoads, tenant.NewestAuthenticationConfig;
//     [APIVersionFor] wraps it).
//   - An inline CustomConfig is stored verbatim only after kube-apiserver's
//     decoding and validation pass and KubernetesVersion loads its
//     apiVersion ([ErrInvalidConfig], [ErrConfigAPIVersion]); the chart
//     stores any text, and tenant.Check only warns (the chart accepts it).
//     AuthenticationSpec.SkipConfigCheck renders it as the chart does,
//     with Authentication.Warnings.
//   - AuthenticationSpec.IssuerURL and CertificateAuthority (a private
//     issuer CA, written as issuer.certificateAuthority) have no chart
//     field; left empty, the text is the chart's.
//   - The configuration and kubeconfig Secrets carry this package's labels
//     (app.kubernetes.io/managed-by=cozystack-oidc and the release), where
//     the chart's carry its Helm labels.
//   - The kubeconfig asks kubelogin for PKCE with --oidc-use-pkce, as the
//     chart's Job writes it, which kubelogin accepts since 2021 and keeps,
//     deprecated, since 2025; KubeconfigSpec.PKCE = [PKCEMethodS256]
//     writes --oidc-pkce-method=S256, which only kubelogin releases after
//     2025-01-13 accept. KubeconfigSpec.InstallHint adds the hint the chart
//     leaves out; IssuerCertificateAuthority, ClientID, ExtraScopes,
//     Command and ExtraArgs change the exec block (the chart has no such
//     settings).
//   - [Bindings] refuses a user without email and a user listed twice
//     ([ErrInvalidUser]), where the chart's Job would fail applying them.
//     Pruning follows the Job: [RBAC.Sync] deletes the release's bindings no
//     user needs; in mode None the Job touches none, which package
//     cozystack's Cluster.SyncOIDCUsers follows (Cluster.PruneOIDCUsers
//     deletes them on request).
//
// # Errors
//
// Configuration problems wrap [ErrInvalidConfig] (a [*ConfigError] lists the
// apiserver's field errors); the chart's refusals of the values are package
// tenant's ([tenant.ErrOIDCCustomConfigConflict], [tenant.ErrLegacyOIDCFlag],
// ...). Every token
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
