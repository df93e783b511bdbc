package oidc_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cozystack/tenantkit/oidc"
	"github.com/cozystack/tenantkit/oidc/oidctest"
)

// The default key refresh, KeyRefreshOnExpiry, is kube-apiserver 1.37's:
// refetch only after a failure, once the cached set has expired (or is
// within 30 s of it). oidc/internal/apiserverauthn checks the same
// sequences against the apiserver itself.

func TestKeysOnExpiryRefuseANewKeyUntilTheSetExpires(t *testing.T) {
	iss, clk, v, sign := keysFixture(t, "max-age=600", oidc.KeyRefreshOnExpiry)
	ctx := context.Background()
	_, err := v.Verify(ctx, sign(iss.Key()))
	require.NoError(t, err)

	next := iss.RotateKeyT(t)
	_, err = v.Verify(ctx, sign(next))
	require.ErrorIs(t, err, oidc.ErrUnknownKey, "fresh cached keys: no refetch, as on a 1.37 apiserver")
	require.Equal(t, 1, iss.JWKSFetches())

	clk.Add(569 * time.Second)
	_, err = v.Verify(ctx, sign(next))
	require.ErrorIs(t, err, oidc.ErrUnknownKey)
	require.Equal(t, 1, iss.JWKSFetches())

	clk.Add(2 * time.Second) // within 30 s of the max-age
	_, err = v.Verify(ctx, sign(next))
	require.NoError(t, err)
	require.Equal(t, 2, iss.JWKSFetches())
}

func TestKeysOnExpiryKeepRemovedKeysUntilAFetch(t *testing.T) {
	iss, clk, v, sign := keysFixture(t, "max-age=60", oidc.KeyRefreshOnExpiry)
	ctx := context.Background()
	old := iss.Key()
	_, err := v.Verify(ctx, sign(old))
	require.NoError(t, err)
	iss.RotateKeyT(t)
	iss.RemoveKey(old.ID)
	clk.Add(10 * time.Minute)
	_, err = v.Verify(ctx, sign(old))
	require.NoError(t, err, "a cached key verifies without looking at the expiry")
	require.Equal(t, 1, iss.JWKSFetches())

	// A failing token after the expiry fetches; the old key is gone then.
	_, err = v.Verify(ctx, sign(oidctest.GenerateKeyT(t, old.Algorithm)))
	require.ErrorIs(t, err, oidc.ErrUnknownKey)
	require.Equal(t, 2, iss.JWKSFetches())
	_, err = v.Verify(ctx, sign(old))
	require.ErrorIs(t, err, oidc.ErrUnknownKey)
}

func TestKeysOnExpiryWithoutCachingHeadersRefetchOnEveryFailure(t *testing.T) {
	iss, _, v, sign := keysFixture(t, "-", oidc.KeyRefreshOnExpiry)
	ctx := context.Background()
	_, err := v.Verify(ctx, sign(iss.Key()))
	require.NoError(t, err)
	for range 5 {
		_, err := v.Verify(ctx, sign(oidctest.Key{ID: randomKid(), Algorithm: iss.Key().Algorithm, Private: iss.Key().Private}))
		require.ErrorIs(t, err, oidc.ErrUnknownKey)
	}
	require.Equal(t, 6, iss.JWKSFetches(), "no rate limit in 1.37")
	for range 5 {
		_, err := v.Verify(ctx, sign(iss.Key()))
		require.NoError(t, err)
	}
	require.Equal(t, 6, iss.JWKSFetches(), "tokens the cache verifies fetch nothing")
}

func TestKeysOnExpiryWhileTheIssuerIsDown(t *testing.T) {
	iss, clk, v, sign := keysFixture(t, "max-age=60", oidc.KeyRefreshOnExpiry)
	ctx := context.Background()
	tok := sign(iss.Key())
	_, err := v.Verify(ctx, tok)
	require.NoError(t, err)
	iss.SetDown(true)
	clk.Add(10 * time.Minute)
	_, err = v.Verify(ctx, tok)
	require.NoError(t, err, "cached keys keep verifying")
	_, err = v.Verify(ctx, sign(oidctest.GenerateKeyT(t, iss.Key().Algorithm)))
	require.ErrorIs(t, err, oidc.ErrKeysUnavailable, "the refetch a failure triggers fails, as the apiserver's does")
	iss.SetDown(false)
	_, err = v.Verify(ctx, sign(oidctest.GenerateKeyT(t, iss.Key().Algorithm)))
	require.ErrorIs(t, err, oidc.ErrUnknownKey)
}

func TestKeysOnExpiryRefuseEveryTokenWhileTheJWKSDoesNotDecode(t *testing.T) {
	iss := oidctest.StartT(t, oidctest.Config{CacheControl: "-"})
	iss.SetKeysJSON(func(keys []json.RawMessage) []json.RawMessage {
		return append(keys, json.RawMessage(`{"kty":"OKP","crv":"X25519","kid":"x","x":"AAAA"}`))
	})
	v := newVerifier(t, oidc.JWTAuthenticator(acme, iss.URL(), iss.CAPEM()))
	tok := oidctest.SignT(t, iss.Key(), iss.Claims(acme.ClientID(), "alice@example.org", "tenant-acme-admin"))
	_, err := v.Verify(context.Background(), tok)
	require.ErrorIs(t, err, oidc.ErrKeysUnavailable)
	var kse *oidc.KeySetError
	require.ErrorAs(t, err, &kse)
	require.Equal(t, 1, kse.Index)
	require.Equal(t, "x", kse.KeyID)

	skipping := newVerifier(t, oidc.JWTAuthenticator(acme, iss.URL(), iss.CAPEM()), func(c *oidc.VerifierConfig) { c.SkipInvalidKeys = true })
	_, err = skipping.Verify(context.Background(), tok)
	require.NoError(t, err, "SkipInvalidKeys drops the entry, as go-oidc v3 does")

	iss.SetKeysJSON(nil)
	_, err = v.Verify(context.Background(), tok)
	require.NoError(t, err, "the next fetch decodes")
}
