package serverbin

// Dex is the dex OpenID Connect provider v2.45.1 (pinned by pseudo-version,
// since dex's tags are not usable as module versions), embedded in a thin
// main under internal/servers/dex. The local environment runs it as the
// real IdP for OIDC tests (see localenv.StartDex).
var Dex = Server{Name: "dex", Module: "dex", Package: "./cmd/dex",
	Upstream: "github.com/dexidp/dex@v0.0.0-20260303133905-11d2eeb52b42", Version: "v2.45.1",
	VersionArgs: []string{"version"}}
