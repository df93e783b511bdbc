// Package oidctest is an OpenID provider in memory for tests of code that
// uses package oidc: an HTTPS issuer on loopback serving discovery and a
// JWKS, and helpers that sign any token a test needs — valid ones, and the
// expired, mis-addressed, wrongly signed and malformed ones a real IdP
// never issues.
//
//	iss := oidctest.StartT(t, oidctest.Config{})
//	v, err := oidc.NewVerifier(ctx, oidc.VerifierConfig{
//		JWT:        oidc.JWTAuthenticator(cluster, iss.URL(), iss.CAPEM()),
//		HTTPClient: iss.Client(),
//	})
//	token := oidctest.SignT(t, iss.Key(), iss.Claims(cluster.ClientID(), "alice@example.org", "tenant-acme-admin"))
//	user, err := v.Verify(ctx, token)
//
// Keys rotate with RotateKey and disappear with RemoveKey; PublishKey
// publishes a key the issuer does not sign with, and SetKeysJSON serves
// whatever JWKS entries a test needs (an unknown kty, a lower-case alg, an
// x5u ...). Config.CacheControl sets the JWKS caching header, SetDown makes
// the issuer answer 503, and JWKSFetches and DiscoveryFetches count
// requests, so tests can observe a verifier's key cache and discovery.
//
// SignRaw signs any header byte for byte (a duplicate alg, no alg, a
// crit), SignBytes any signing input, and GenerateWeakRSAKey makes the
// short RSA keys Go's crypto/rsa refuses.
//
// A token is signed one way: with a Key, the issuer's current one
// (Issuer.Key) or any other (GenerateKey): Key.Sign, or SignT in a test.
//
// Every helper comes in two forms: X returns an error and takes no
// testing.TB (Start, GenerateKey, Key.Sign, ...); XT takes a testing.TB
// first, fails the test on error and stops what it started when the test
// ends (StartT, GenerateKeyT, SignT, ...). They
// never panic. For a real IdP (login flows, refresh tokens) use dex through the
// local environment (package localenv).
package oidctest
