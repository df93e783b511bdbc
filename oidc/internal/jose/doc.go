// Package jose reads JOSE objects exactly as kube-apiserver 1.37 does
// through go-oidc v2 and go-jose v2.6.3: JWKS documents (ParseKeySet),
// compact JWS tokens (Parse) and signatures (Key.Verify), and the JSON
// scanner they share, which accepts what encoding/json accepts.
//
// It exists so that package oidc verifies tokens with the apiserver's
// outcome without go-jose v2 in the library's module graph, and so that
// oidc/internal/apiserverauthn can fuzz it against go-jose v2 itself.
package jose
