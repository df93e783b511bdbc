package apiserverauthn_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	apiserveroidc "k8s.io/apiserver/plugin/pkg/authenticator/token/oidc"

	"github.com/cozystack/tenantkit/oidc"
	"github.com/cozystack/tenantkit/oidc/oidctest"
)

// newAPIServerAuthenticator builds kube-apiserver's JWT authenticator the
// way kube-apiserver does for --authentication-config (every valid signing
// algorithm), pointed at iss, and waits until it has discovered the issuer.
func newAPIServerAuthenticator(t testing.TB, iss *oidctest.Issuer, jwt apiserver.JWTAuthenticator) authenticator.Token {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	a, err := apiserveroidc.New(ctx, apiserveroidc.Options{
		JWTAuthenticator:     jwt,
		Client:               iss.Client(),
		SupportedSigningAlgs: apiserveroidc.AllValidSigningAlgorithms(),
	})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return a.HealthCheck() == nil }, 30*time.Second, 20*time.Millisecond,
		"apiserver authenticator did not initialise")
	return a
}

// newVerifier builds our Verifier for the same authenticator entry.
func newVerifier(t testing.TB, iss *oidctest.Issuer, jwt apiserver.JWTAuthenticator) *oidc.Verifier {
	t.Helper()
	return newVerifierWith(t, iss, jwt, func(*oidc.VerifierConfig) {})
}

// newVerifierWith builds our Verifier with a changed configuration.
func newVerifierWith(t testing.TB, iss *oidctest.Issuer, jwt apiserver.JWTAuthenticator, edit func(*oidc.VerifierConfig)) *oidc.Verifier {
	t.Helper()
	cfg := oidc.VerifierConfig{JWT: jwt, HTTPClient: iss.Client()}
	edit(&cfg)
	v, err := oidc.NewVerifier(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, v.Close()) })
	return v
}

func joseAlg(s string) oidc.Algorithm { return oidc.Algorithm(s) }
