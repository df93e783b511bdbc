package oidc_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cozystack/tenantkit/oidc"
	"github.com/cozystack/tenantkit/oidc/oidctest"
)

func TestNewVerifierFailsWhileTheIssuerIsDown(t *testing.T) {
	iss := oidctest.StartT(t, oidctest.Config{})
	iss.SetDown(true)
	_, err := oidc.NewVerifier(context.Background(), oidc.VerifierConfig{JWT: oidc.JWTAuthenticator(acme, iss.URL(), iss.CAPEM())})
	require.ErrorContains(t, err, "503")
}

func TestBackgroundDiscoveryWaitsForTheIssuer(t *testing.T) {
	iss := oidctest.StartT(t, oidctest.Config{})
	iss.SetDown(true)
	v := newVerifier(t, oidc.JWTAuthenticator(acme, iss.URL(), iss.CAPEM()), func(c *oidc.VerifierConfig) {
		c.BackgroundDiscovery, c.DiscoveryRetryInterval = true, 20*time.Millisecond
	})
	tok := oidctest.SignT(t, iss.Key(), iss.Claims(acme.ClientID(), "alice@example.org", "tenant-acme-admin"))

	var notReady *oidc.NotReadyError
	require.ErrorAs(t, v.Ready(), &notReady)
	require.ErrorContains(t, notReady.Err, "503")
	_, err := v.Verify(context.Background(), tok)
	require.ErrorIs(t, err, oidc.ErrNotReady, "as the apiserver: 'authenticator not initialized'")
	require.ErrorAs(t, err, &notReady)

	c := iss.Claims(acme.ClientID(), "alice@example.org", "tenant-acme-admin")
	c["iss"] = "https://other.example.org"
	_, err = v.Verify(context.Background(), oidctest.SignT(t, iss.Key(), c))
	require.ErrorIs(t, err, oidc.ErrIssuerMismatch, "another issuer's token is routed away first")

	iss.SetDown(false)
	require.Eventually(t, func() bool { return v.Ready() == nil }, 10*time.Second, 10*time.Millisecond)
	_, err = v.Verify(context.Background(), tok)
	require.NoError(t, err)
}

func TestBackgroundDiscoveryStopsOnClose(t *testing.T) {
	iss := oidctest.StartT(t, oidctest.Config{})
	iss.SetDown(true)
	v, err := oidc.NewVerifier(context.Background(), oidc.VerifierConfig{JWT: oidc.JWTAuthenticator(acme, iss.URL(), iss.CAPEM()),
		BackgroundDiscovery: true, DiscoveryRetryInterval: 10 * time.Millisecond})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return iss.DiscoveryFetches() >= 3 }, 10*time.Second, 5*time.Millisecond, "retries")
	require.NoError(t, v.Close())
	stopped := iss.DiscoveryFetches()
	time.Sleep(100 * time.Millisecond)
	require.Equal(t, stopped, iss.DiscoveryFetches(), "no retry after Close")
	require.ErrorIs(t, v.Ready(), oidc.ErrNotReady)
	require.NoError(t, v.Close(), "Close is idempotent")
}

func TestBackgroundDiscoveryStopsWithItsContext(t *testing.T) {
	iss := oidctest.StartT(t, oidctest.Config{})
	iss.SetDown(true)
	ctx, cancel := context.WithCancel(context.Background())
	v, err := oidc.NewVerifier(ctx, oidc.VerifierConfig{JWT: oidc.JWTAuthenticator(acme, iss.URL(), iss.CAPEM()),
		BackgroundDiscovery: true, DiscoveryRetryInterval: 10 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, v.Close()) })
	require.Eventually(t, func() bool { return iss.DiscoveryFetches() >= 2 }, 10*time.Second, 5*time.Millisecond)
	cancel()
	time.Sleep(50 * time.Millisecond) // a retry already under way may finish
	stopped := iss.DiscoveryFetches()
	time.Sleep(100 * time.Millisecond)
	require.Equal(t, stopped, iss.DiscoveryFetches(), "no retry once ctx is done")
}

func TestVerifyAfterClose(t *testing.T) {
	iss := oidctest.StartT(t, oidctest.Config{CacheControl: "-"})
	v, err := oidc.NewVerifier(context.Background(), oidc.VerifierConfig{JWT: oidc.JWTAuthenticator(acme, iss.URL(), iss.CAPEM())})
	require.NoError(t, err)
	tok := oidctest.SignT(t, iss.Key(), iss.Claims(acme.ClientID(), "alice@example.org", "tenant-acme-admin"))
	_, err = v.Verify(context.Background(), tok)
	require.NoError(t, err)
	require.NoError(t, v.Close())
	_, err = v.Verify(context.Background(), tok)
	require.NoError(t, err, "cached keys still verify")
	_, err = v.Verify(context.Background(), oidctest.SignT(t, iss.Key(), iss.Claims(acme.ClientID(), "alice@example.org", "tenant-acme-admin", "x")))
	require.NoError(t, err)
	_, err = v.Verify(context.Background(), oidctest.SignT(t, oidctest.GenerateKeyT(t, "RS256"), iss.Claims(acme.ClientID(), "a@b.c", "tenant-acme-admin")))
	require.True(t, errors.Is(err, oidc.ErrKeysUnavailable), "no fetch after Close: %v", err)
}
