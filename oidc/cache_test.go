package oidc_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cozystack/tenantkit/oidc"
	"github.com/cozystack/tenantkit/oidc/oidctest"
)

func cachedFixture(t *testing.T, size int, ttl time.Duration) (*oidctest.Issuer, *clock, *oidc.Verifier) {
	t.Helper()
	iss := oidctest.StartT(t, oidctest.Config{CacheControl: "-"})
	clk := newClock()
	v := newVerifier(t, oidc.JWTAuthenticator(acme, iss.URL(), iss.CAPEM()), func(c *oidc.VerifierConfig) {
		c.Now, c.TokenCache = clk.Now, oidc.TokenCacheConfig{Size: size, MaxTTL: ttl}
	})
	return iss, clk, v
}

func TestTokenCacheIsBoundedByExp(t *testing.T) {
	iss, clk, v := cachedFixture(t, 8, time.Hour)
	ctx := context.Background()
	c := iss.Claims(acme.ClientID(), "alice@example.org", "tenant-acme-admin")
	c["exp"] = clk.Now().Add(90 * time.Second).Unix()
	tok := oidctest.SignT(t, iss.Key(), c)
	_, err := v.Verify(ctx, tok)
	require.NoError(t, err)
	clk.Add(80 * time.Second)
	_, err = v.Verify(ctx, tok)
	require.NoError(t, err)
	clk.Add(20 * time.Second)
	_, err = v.Verify(ctx, tok)
	require.ErrorIs(t, err, oidc.ErrExpired, "a cached token expires with its exp")
}

func TestTokenCacheIsClearedWhenTheKeysChange(t *testing.T) {
	iss, _, v := cachedFixture(t, 8, time.Hour)
	ctx := context.Background()
	old := iss.Key()
	tok := oidctest.SignT(t, iss.Key(), iss.Claims(acme.ClientID(), "alice@example.org", "tenant-acme-admin"))
	_, err := v.Verify(ctx, tok)
	require.NoError(t, err)

	// The issuer drops the key; the cache still answers until a fetch sees
	// the change.
	next := iss.RotateKeyT(t)
	iss.RemoveKey(old.ID)
	_, err = v.Verify(ctx, tok)
	require.NoError(t, err, "answered from the cache")

	// A token under the new key makes the verifier fetch (no caching
	// headers): the keys changed, the cache is cleared, the old token fails.
	_, err = v.Verify(ctx, oidctest.SignT(t, next, iss.Claims(acme.ClientID(), "bob@example.org", "tenant-acme-admin")))
	require.NoError(t, err)
	_, err = v.Verify(ctx, tok)
	require.ErrorIs(t, err, oidc.ErrUnknownKey)
}

func TestTokenCacheReturnsCopies(t *testing.T) {
	iss, _, v := cachedFixture(t, 8, 10*time.Second)
	ctx := context.Background()
	tok := oidctest.SignT(t, iss.Key(), iss.Claims(acme.ClientID(), "alice@example.org", "tenant-acme-admin", "devs"))
	u, err := v.Verify(ctx, tok)
	require.NoError(t, err)
	u.Groups[0], u.Username = "tenant-acme-super-admin", "mallory"
	again, err := v.Verify(ctx, tok)
	require.NoError(t, err)
	require.Equal(t, "alice@example.org", again.Username, "callers cannot change a cached user")
	require.Equal(t, []string{"tenant-acme-admin", "devs"}, again.Groups)
}

func TestTokenCacheNeverCachesRejections(t *testing.T) {
	iss, clk, v := cachedFixture(t, 8, time.Hour)
	ctx := context.Background()
	c := iss.Claims(acme.ClientID(), "alice@example.org", "tenant-acme-admin")
	c["nbf"] = clk.Now().Add(5 * time.Minute).Unix()
	tok := oidctest.SignT(t, iss.Key(), c)
	_, err := v.Verify(ctx, tok)
	require.ErrorIs(t, err, oidc.ErrNotYetValid)
	clk.Add(5 * time.Minute)
	_, err = v.Verify(ctx, tok)
	require.NoError(t, err)
}

func TestTokenCacheIsSafeForConcurrentUse(t *testing.T) {
	const workers, rounds = 8, 40
	iss, clk, v := cachedFixture(t, 4, time.Second)
	toks := make([]string, 8)
	for i := range toks {
		toks[i] = oidctest.SignT(t, iss.Key(), iss.Claims(acme.ClientID(), fmt.Sprintf("u%d@example.org", i), "tenant-acme-admin"))
	}
	// Tokens from keys the issuer never published, signed here: a goroutine
	// other than the test's may not stop the test (t.FailNow).
	strangers := make([][]string, workers)
	for g := range strangers {
		for j := 0; j < rounds; j += 13 {
			strangers[g] = append(strangers[g], oidctest.SignT(t, oidctest.GenerateKeyT(t, "ES256"), iss.Claims(acme.ClientID(), "x@y.z")))
		}
	}
	// Each worker records every result; the test goroutine asserts on them.
	errs := make([][]error, workers)
	rejected := make([][]error, workers)
	var wg sync.WaitGroup
	for g := range workers {
		wg.Go(func() {
			for j := range rounds {
				if j%10 == 0 {
					clk.Add(300 * time.Millisecond)
				}
				if j%13 == 0 {
					_, err := v.Verify(context.Background(), strangers[g][j/13])
					rejected[g] = append(rejected[g], err)
					continue
				}
				u, err := v.Verify(context.Background(), toks[(g+j)%len(toks)])
				if err == nil {
					u.Groups = append(u.Groups, "changed")
				}
				errs[g] = append(errs[g], err)
			}
		})
	}
	wg.Wait()
	for g := range workers {
		require.Len(t, errs[g], rounds-len(strangers[g]))
		for j, err := range errs[g] {
			require.NoError(t, err, "worker %d, call %d", g, j)
		}
		for j, err := range rejected[g] {
			require.Error(t, err, "worker %d: a token from an unpublished key, call %d", g, j)
		}
	}
}
