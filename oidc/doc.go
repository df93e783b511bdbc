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
// A [Verifier] is built from one JWT authenticator entry and decides every
// token as kube-apiserver 1.37's JWT authenticator does, mapping it to the
// same user. Unlike the apiserver, which answers 401 and logs the reason,
// it returns the reason:
//
//	v, err := oidc.NewVerifier(ctx, oidc.VerifierConfig{JWT: cluster.JWTAuthenticator(issuerURL, caPEM)})
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
// On the tenant gate [Cluster.TenantGroupsGate] renders, Verify skips the
// CEL interpreter (the rule is still compiled and validated); compiled
// rules are shared by verifiers of the same configuration. `make bench`
// reports, in one run, Verify's throughput against the apiserver's for
// RS256 and ES256, with the gate native and through CEL, with and without
// the token cache, and against the bare signature check.
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
