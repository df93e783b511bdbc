// Package apiserverauthn holds the tests that run package oidc's Verifier
// side by side with kube-apiserver's own JWT authenticator
// (k8s.io/apiserver/plugin/pkg/authenticator/token/oidc, v0.37.2, which
// verifies with go-oidc v2 and go-jose v2):
//
//   - differential tests: the bad-input corpus and generated tokens on
//     several configurations, JWKS shapes providers publish (unknown kty,
//     X25519, x5u, non-signing or lower-case alg, short RSA keys,
//     duplicate kids ...), hand-written JOSE headers (duplicate alg, no
//     alg, crit, b64, whitespace) and key rotations under several
//     Cache-Control headers; each logs "AGREEMENT <test> <agree>/<tokens>"
//     and fails on any disagreement;
//   - fuzz targets comparing oidc/internal/jose with go-jose v2 (JWKS
//     decoding, header parsing, signing input);
//   - benchmarks of Verify against the apiserver, its token cache and the
//     bare signature check, reported as ratios measured in one process.
//
// It is a separate module so that the library's go.mod does not carry the
// apiserver's go-oidc v2 and go-jose v2. `make test` and `make bench` run it.
package apiserverauthn
