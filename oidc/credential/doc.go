// Package credential signs a kubectl user in to a Cozystack tenant
// cluster and returns the cluster's ID token: the client side of the
// per-cluster audiences of package oidc, on github.com/coreos/go-oidc/v3
// and golang.org/x/oauth2. The example examples/oidc-credential wraps it as
// a kubectl exec credential plugin.
//
// # The flow
//
// Each tenant cluster has its own public client at the issuer (Cozystack:
// "<namespace>-kubernetes-<cluster>", PKCE required, redirects
// http://localhost:8000 and :18000), and its apiserver accepts only ID
// tokens whose audience is that client. [Get] returns such a token for a
// [Config] naming the issuer and the client:
//
//  1. It discovers the issuer (go-oidc) and takes the configuration's
//     inter-process lock in the cache directory.
//  2. A cached ID token is returned if it still verifies: signature
//     against the issuer's keys, issuer, audience = ClientID, expiry.
//  3. Otherwise the cached refresh token is traded for new tokens.
//  4. Otherwise the user signs in: [GrantAuthCode] (authorization code,
//     PKCE S256, nonce, a loopback redirect on the first free port of
//     8000 and 18000; the URL is printed, a browser opened only when
//     Config.Browser is set) or [GrantDeviceCode] (RFC 8628 with PKCE
//     S256, for machines without a browser).
//
// Every new ID token is verified the same way before it is cached or
// returned. [WriteExecCredential] writes the token as kubectl's
// client.authentication.k8s.io/v1 ExecCredential; [ReadExecInfo]
// reads what kubectl passes in KUBERNETES_EXEC_INFO. [Logout] removes the
// cache entry and revokes the refresh token (RFC 7009) where the issuer
// advertises a revocation_endpoint. [Config.Args] and [Config.AddFlags]
// are the plugin's command line, so a kubeconfig rendered by
// oidc.RenderKubeconfig (Plugin: oidc.PluginTenantkit) and the plugin
// always agree.
//
// # Guarantees
//
//   - One sign-in for concurrent commands: one process at a time works on
//     a configuration's cache entry (flock(2), released by the kernel when
//     a process dies); 16 kubectl commands started together cause one
//     sign-in and the others wait for its token.
//   - Per user, per configuration: the cache lives under os.UserCacheDir
//     (tenantkit/oidc-credential) in a 0700 directory of this user, one
//     0600 file per key; the key hashes everything that changes the token
//     (issuer, client, scopes, grant, extra parameters, issuer CA).
//   - Never trusted as it is: a cache file that is truncated, edited, from
//     another key or unknown format is ignored and replaced; a cached ID
//     token is verified again on every call, so a forged one is refused.
//   - Bounded sign-ins: after Config.MaxFailedSignIns (3) failed or
//     abandoned sign-ins in a row, Get refuses to start another for 30 s,
//     doubling up to 15 minutes ([ErrSignInBackoff]); a success or Logout
//     resets it. A background tool cannot open endless login tabs.
//   - No token leaks: no error, log record or prompt contains a token;
//     the plugin writes the token to stdout only.
//
// # Errors
//
// Each error wraps one sentinel: [ErrInvalidConfig], [ErrIssuerUnreachable]
// or, when the issuer answered with an error status or an unreadable
// document, [ErrIssuerFailed] (both [*IssuerError]), [ErrAudienceMismatch]
// ([*AudienceError]),
// [ErrTokenInvalid], [ErrClockSkew] ([*ClockSkewError]: a token just
// issued is expired or not yet valid by the local clock),
// [ErrRefreshRejected] ([*RefreshError]: expired or revoked; Get then
// signs in), [ErrPortInUse] ([*PortError]), [ErrInterrupted] (ctx ended
// during a sign-in, or while waiting for another process's; not counted as
// a failed sign-in), [ErrSignInTimeout] (Config.SignInTimeout ran out;
// counted), [ErrInteractionRequired] (Config.NonInteractive and a sign-in
// would be needed),
// [ErrSignInDenied] ([*SignInError]), [ErrSignInBackoff] ([*BackoffError])
// and [ErrCacheInsecure].
//
// # Limits
//
// One token per cluster: an ID token's audience is the client that asked
// for it, so each cluster's client signs in once (then refreshes). RFC
// 8693 token exchange could mint a token for another cluster's audience
// without a second sign-in, but dex exchanges only upstream identity
// providers' tokens through a connector, not its own (docs/oidc.md); the
// package does not offer it. The lock needs a Unix system (flock).
package credential
