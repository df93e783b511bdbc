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
// A [Verifier] is built from one JWT authenticator entry and decides every
// token as kube-apiserver 1.37's JWT authenticator does, mapping it to the
// same user. Unlike the apiserver, which answers 401 and logs the reason,
// it returns the reason:
//
//	v, err := oidc.NewVerifier(ctx, oidc.VerifierConfig{JWT: oidc.JWTAuthenticator(cluster, issuerURL, caPEM)})
//	if err != nil { ... }
//	defer v.Close()
//	user, err := v.Verify(ctx, token)
//	var aud *oidc.AudienceError
//	if errors.As(err, &aud) { ... } // a token for another cluster
//
// The apiserver (1.37, k8s.io/apiserver v0.37.2) verifies with go-oidc
// v2.5.0 and go-jose v2.6.3. This package does not link them: it
// reimplements what they decide, and oidc/internal/apiserverauthn runs it
// against the apiserver's own authenticator on thousands of tokens, JWKS
// shapes and key rotations, and fuzzes its JOSE reader against go-jose v2.
// What it mirrors:
//
//   - routing: a token whose untrusted iss is not the issuer (Google's
//     legacy accounts.google.com counts as https://accounts.google.com) is
//     refused before anything else ([ErrIssuerMismatch]);
//   - the JOSE header as go-jose v2 reads it: whitespace anywhere in the
//     token is dropped; a duplicate member at any depth, a non-string
//     kid or alg, a bad x5c or a non-public jwk is [ErrMalformedToken];
//     alg must be RS, ES or PS 256/384/512, none missing
//     ([ErrUnsupportedAlgorithm]); "b64": false makes the signature cover
//     the payload unencoded; a crit naming anything but b64 fails every
//     key ([ErrCriticalHeader]);
//   - the JWKS as go-jose v2 decodes it: one entry it cannot decode (an
//     unknown kty, an OKP key on X25519, an x5u string, a duplicate member,
//     null) fails the whole set and so every token ([ErrKeysUnavailable]
//     wrapping [ErrInvalidKeySet], [*KeySetError] naming the entry); a
//     key's alg and use are never consulted, so a key published with alg
//     "RSA-OAEP" or "rs256" or use "enc" verifies tokens; every key with
//     the token's kid (every key without one) is tried; a key Go refuses
//     (RSA under 1024 bits), of the other type, symmetric or private
//     verifies nothing ([ErrUnusableKey]);
//   - key refresh ([KeyRefreshOnExpiry], the default): keys are fetched on
//     first use and fetched again only when a token fails and the cached
//     set has expired by the JWKS response's caching headers (within 30
//     seconds; at once without them); cached keys keep verifying, also
//     while the issuer is down; a token under a rotated-in key is refused
//     until then ([ErrUnknownKey]);
//   - go-oidc v2's claims, decoded with encoding/json's case-insensitive
//     names: iss, aud (any configured audience), exp without leeway (none
//     is expired), nbf with one minute ([DefaultNotBeforeLeeway]); iat,
//     sub, nonce, at_hash and the distributed claim names must decode;
//   - the mappings and rules: the username claim (with the email_verified
//     rule), groups, uid, extra (and the jti credential ID), required
//     claims, claim and user validation rules, the CEL compiled by the
//     apiserver's compiler with its cost limit.
//
// Deliberate differences, each typed or switchable:
//
//   - every rejection wraps one reason ([ErrExpired], [ErrAudienceMismatch],
//     ...), where the apiserver answers 401;
//   - tokens over [DefaultMaxTokenBytes] (1 MiB, more than the apiserver
//     reads from a request header) are refused before parsing
//     ([ErrTokenTooLarge]); discovery documents and JWKS over 1 MiB are
//     refused too (the apiserver reads any size);
//   - a groups claim only available from a distributed claims endpoint is
//     refused ([ErrDistributedClaims]); the apiserver fetches it;
//   - NewVerifier fails when the issuer cannot be discovered; with
//     [VerifierConfig].BackgroundDiscovery it returns and retries in the
//     background as the apiserver does, Verify answering [ErrNotReady]
//     meanwhile ([Verifier.Ready] is the apiserver's health check);
//   - key expiry follows [VerifierConfig].Now (the apiserver: the wall
//     clock);
//   - [KeyRefreshOnUnknownKey] refetches as soon as a token names an
//     unknown kid, rate-limited as in 1.38, and revalidates the keys once
//     their max-age passes; SkipInvalidKeys drops JWKS entries that do not
//     decode, as go-oidc v3 and RFC 7517 do; NotBeforeLeeway can be 1.38's
//     five minutes;
//   - the verified-token cache ([TokenCacheConfig], off by default) answers
//     a token verified before from memory until its exp, MaxTTL (10 s by
//     default) or a change of the issuer's keys. kube-apiserver puts a 10 s
//     success cache in front of its authenticators, which ignores exp;
//     leave the cache off where each call must see key changes the
//     verifier has not fetched yet.
//
// On the tenant gate [TenantGroupsGate] renders, Verify skips the
// CEL interpreter (the rule is still compiled and validated); compiled
// rules are shared by verifiers of the same configuration. An ES256
// signature under a P-256 key is checked with a table of the key's
// multiples, built once the key has verified a token (90 KiB per key,
// Go's own P-256 arithmetic from filippo.io/nistec): about half
// crypto/ecdsa's time, with crypto/ecdsa's accept and reject (fuzzed
// against it). `make bench`
// reports, in one run, Verify's throughput against the apiserver's for
// RS256 and ES256, with the gate native and through CEL, with and without
// the token cache, and against the bare signature check.
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
// tenant/testdata/chart/RULES.md names; the OIDC templates are the same in
// both Cozystack releases tenantkit mirrors, tenant.Release20260819 and
// tenant.Release20260821 at cozystack 3c780ac; the tests compare with the
// texts recorded there): templates/oidc-authn-config.yaml (the configuration
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
//     stores any text, and tenant.Check refuses it as tenantkit's own rule
//     (the cluster's apiserver will refuse to start with it;
//     tenant.ValidationError.By without tenant.DecidedByTenantkit is the
//     chart's verdict, which accepts). AuthenticationSpec.SkipConfigCheck
//     renders it as the chart does, with Authentication.Warnings.
//   - AuthenticationSpec.IssuerURL and CertificateAuthority (a private
//     issuer CA, written as issuer.certificateAuthority) have no chart
//     field; left empty, the text is the chart's.
//   - The configuration and kubeconfig Secrets carry the chart's Helm
//     labels ([ChartLabels]: helm.sh/chart, app.kubernetes.io/name,
//     instance, version and managed-by Helm); the chart version, which
//     Cozystack's build writes, is AuthenticationSpec.ChartVersion and
//     KubeconfigSpec.ChartVersion ("" is the source's 0.0.0). The
//     ClusterRoleBindings carry the Job's labels (managed-by
//     cozystack-oidc and the release), by which [PlanRBAC] finds them.
//   - The kubeconfig asks kubelogin for PKCE with --oidc-use-pkce, as the
//     chart's Job writes it, which kubelogin accepts since 2021 and keeps,
//     deprecated, since 2025; KubeconfigSpec.PKCE = [PKCEMethodS256]
//     writes --oidc-pkce-method=S256, which only kubelogin releases after
//     2025-01-13 accept. KubeconfigSpec.InstallHint adds the hint the chart
//     leaves out; IssuerCertificateAuthority, ClientID, ExtraScopes,
//     Command and ExtraArgs change the exec block (the chart has no such
//     settings).
//   - [Bindings] decides users as tenant.KubernetesSpec.Check does: a
//     user without email is refused ([ErrInvalidUser] and
//     tenant.ErrEmptyName; Check's K-oidc-email-empty): the chart renders
//     a binding with an empty subject, which the tenant apiserver refuses,
//     so the chart's Job and the Helm release fail. An email listed twice
//     is one binding with the last entry's role (Check warns,
//     K-oidc-email-duplicate), as the Job's applies of one name leave it.
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
// environment runs dex (package localenv); the package's own integration
// test starts dex and two kube-apiservers configured by RenderAuthentication
// and checks isolation, the tenant gate and RBAC end to end. Integration
// tests are skipped with -short.
package oidc
