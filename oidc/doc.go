// Package oidc gives each Cozystack tenant Kubernetes cluster its own OIDC
// audience, renders what the cluster and its users need, and verifies
// tokens exactly as the cluster's kube-apiserver does.
//
// # Guarantees
//
//   - Per-cluster audience: in System mode a cluster trusts only tokens
//     whose audience is its own client ID, "<namespace>-kubernetes-<name>"
//     (ref.Cluster.ClientID). A token minted for cluster A is refused by
//     cluster B, even in the same tenant and from the same Keycloak realm.
//   - Only the tenant's people: a CEL rule admits members of the tenant
//     groups only ([TenantGroupsGate]).
//   - What the apiserver accepts: every configuration [RenderAuthentication]
//     returns without warnings has passed k8s.io/apiserver's own decoding
//     and validation, CEL included, and loads on the cluster's version.
//   - Same verdict as kube-apiserver 1.37: a [Verifier] accepts exactly the
//     tokens the apiserver's JWT authenticator accepts and maps them to the
//     same user; where the apiserver answers 401, it returns the reason as
//     a typed error. No error contains a token.
//
// # The flow
//
// A tenant cluster is a ref.Cluster; its OIDC mode and users are the
// application's spec.oidc (package tenant). For the apiserver,
// [AuthenticationSpecFor] reads what decides authentication from the
// application and [RenderAuthentication] renders the
// AuthenticationConfiguration, its Secret, the --authentication-config
// flag and the volume that mounts it (see the AuthenticationSpecFor example).
// It refuses what Cozystack's chart refuses, with package tenant's
// validation errors. For the platform realm, [NewKeycloakClient] and
// [NewKeycloakClientScope] are the Keycloak objects of the cluster's
// public client and audience.
//
// For users, [KubeconfigSpecFor] fills a [KubeconfigSpec] from the model
// and the [KubeconfigFacts] the values do not hold, and [RenderKubeconfig]
// renders the kubeconfig (client-go types, YAML and the Secret Cozystack
// publishes) with kubectl oidc-login's exec block, or, with
// [PluginTenantkit], tenantkit's own plugin (package oidc/credential: the
// sign-in, its cache and the ExecCredential kubectl reads). An [RBAC] client on the
// tenant cluster plans the users' ClusterRoleBindings against what the
// cluster has ([RBAC.Plan], a printable dry run), carries a plan out
// ([RBAC.Execute]) or does both ([RBAC.Sync]).
//
// To check tokens, build a [Verifier] from the cluster's JWT authenticator
// entry ([JWTAuthenticator]) and call [Verifier.Verify]; Close it when
// done (Close on a nil *Verifier does nothing):
//
//	v, err := oidc.NewVerifier(ctx, oidc.VerifierConfig{JWT: oidc.JWTAuthenticator(cluster, issuerURL, caPEM)})
//	if err != nil {
//		return err
//	}
//	defer v.Close()
//	user, err := v.Verify(ctx, token)
//
// The Verifier example shows a token for another cluster refused with an
// [*AudienceError]. The zero [VerifierConfig] beyond JWT is the apiserver's
// behaviour; its fields name each deliberate relaxation or extension
// (background discovery, key refresh on an unknown key, a verified-token
// cache, skipping undecodable keys).
//
// # Errors
//
// Configuration problems wrap [ErrInvalidConfig] (a [*ConfigError] lists
// the apiserver's field errors); the chart's refusals of the values are
// package tenant's ([tenant.ErrOIDCCustomConfigConflict],
// [tenant.ErrLegacyOIDCFlag], ...). Every token rejection wraps one reason,
// such as [ErrExpired], [ErrAudienceMismatch], [ErrRuleFailed] or
// [ErrUnknownKey], and the *XError types carry the details (want and got,
// the expiry, the rule and its message).
//
// # Testing
//
// Package oidctest is an OpenID provider in memory: an HTTPS issuer with
// discovery and JWKS, key rotation and outages, and a corpus of bad tokens
// with the reason each must be refused for. For a real IdP, package
// localenv runs dex. docs/oidc.md in the repository details what the
// package mirrors of kube-apiserver and the chart, and where it differs.
package oidc
