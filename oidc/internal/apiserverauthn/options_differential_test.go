package apiserverauthn_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apiserveroidc "k8s.io/apiserver/plugin/pkg/authenticator/token/oidc"

	"github.com/cozystack/tenantkit/oidc"
	"github.com/cozystack/tenantkit/oidc/oidctest"
)

// TestDifferentialDiscovery starts both while the issuer is down: both
// refuse every token (the apiserver: "authenticator not initialized"; the
// Verifier with BackgroundDiscovery: ErrNotReady) and both accept once the
// issuer is back and their background retries have discovered it.
func TestDifferentialDiscovery(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the apiserver's 10 s discovery retry")
	}
	iss := oidctest.StartT(t, oidctest.Config{})
	iss.SetDown(true)
	jwt := oidc.JWTAuthenticator(acme, iss.URL(), iss.CAPEM())
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	theirs, err := apiserveroidc.New(ctx, apiserveroidc.Options{JWTAuthenticator: jwt, Client: iss.Client(),
		SupportedSigningAlgs: apiserveroidc.AllValidSigningAlgorithms()})
	require.NoError(t, err)
	ours := newVerifierWith(t, iss, jwt, func(c *oidc.VerifierConfig) {
		c.BackgroundDiscovery, c.DiscoveryRetryInterval = true, time.Second
	})
	tok := oidctest.Case{Name: "while down", Token: oidctest.SignT(t, iss.Key(), validClaims(iss))}
	var tl tally
	tl.add(t, theirs, ours, tok)
	_, err = ours.Verify(context.Background(), tok.Token)
	require.ErrorIs(t, err, oidc.ErrNotReady)

	iss.SetDown(false)
	require.Eventually(t, func() bool { return theirs.HealthCheck() == nil && ours.Ready() == nil },
		30*time.Second, 50*time.Millisecond, "both discover the issuer")
	tok.Name = "after discovery"
	tl.add(t, theirs, ours, tok)
	tl.report(t)
	require.Equal(t, 1, tl.accepted)
}

// TestKeyRefreshOnUnknownKeyIsASwitchableDifference runs the rotation
// sequence with KeyRefreshOnUnknownKey: the Verifier accepts a token under
// a rotated-in key at once, where 1.37 waits for the cached keys to
// expire, and differs from the apiserver nowhere else.
func TestKeyRefreshOnUnknownKeyIsASwitchableDifference(t *testing.T) {
	iss := oidctest.StartT(t, oidctest.Config{CacheControl: "max-age=600"})
	jwt := oidc.JWTAuthenticator(acme, iss.URL(), iss.CAPEM())
	theirs := newAPIServerAuthenticator(t, iss, jwt)
	ours := newVerifierWith(t, iss, jwt, func(c *oidc.VerifierConfig) { c.KeyRefresh = oidc.KeyRefreshOnUnknownKey })
	var tl tally
	step := func(name string, k oidctest.Key) {
		tl.add(t, theirs, ours, oidctest.Case{Name: name, Token: oidctest.SignT(t, k, validClaims(iss))})
	}
	first := iss.Key()
	step("first key", first)
	next := iss.RotateKeyT(t)
	step("new key", next)
	step("first key again", first)
	require.Len(t, tl.diffs, 1, "%v", tl.diffs)
	require.Contains(t, tl.diffs[0], "new key: apiserver ok=false")
	require.Contains(t, tl.diffs[0], "ours err=<nil>")
	t.Logf("documented difference: %s", tl.diffs[0])
}

// TestSkipInvalidKeysIsASwitchableDifference serves a JWKS with an entry
// go-jose v2 cannot decode: the apiserver refuses every token, the
// Verifier with SkipInvalidKeys accepts the valid ones (as go-oidc v3
// would), and without it refuses them with a typed reason.
func TestSkipInvalidKeysIsASwitchableDifference(t *testing.T) {
	iss := oidctest.StartT(t, oidctest.Config{})
	iss.SetKeysJSON(func(keys []json.RawMessage) []json.RawMessage {
		return append(keys, json.RawMessage(`{"kty":"OKP","crv":"X25519","kid":"x","x":"AAAA"}`))
	})
	jwt := oidc.JWTAuthenticator(acme, iss.URL(), iss.CAPEM())
	theirs := newAPIServerAuthenticator(t, iss, jwt)
	strict := newVerifier(t, iss, jwt)
	skipping := newVerifierWith(t, iss, jwt, func(c *oidc.VerifierConfig) { c.SkipInvalidKeys = true })
	tok := oidctest.SignT(t, iss.Key(), validClaims(iss))

	_, ok, err := theirs.AuthenticateToken(context.Background(), tok)
	require.False(t, ok)
	require.ErrorContains(t, err, "unknown curve X25519")
	_, err = strict.Verify(context.Background(), tok)
	require.ErrorIs(t, err, oidc.ErrKeysUnavailable)
	var kse *oidc.KeySetError
	require.ErrorAs(t, err, &kse)
	require.Equal(t, "x", kse.KeyID)
	_, err = skipping.Verify(context.Background(), tok)
	require.NoError(t, err)
}
