package oidc_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cozystack/tenantkit/oidc"
	"github.com/cozystack/tenantkit/oidc/oidctest"
)

// clock is a settable clock for the verifier (token times and key cache).
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Now()} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// keysFixture is an issuer, a clock and a verifier on that clock with the
// given refresh mode, and a signer for the cluster's usual claims.
func keysFixture(t *testing.T, cacheControl string, mode oidc.KeyRefresh) (*oidctest.Issuer, *clock, *oidc.Verifier, func(k oidctest.Key) string) {
	t.Helper()
	iss := oidctest.StartT(t, oidctest.Config{CacheControl: cacheControl})
	clk := newClock()
	v := newVerifier(t, oidc.JWTAuthenticator(acme, iss.URL(), iss.CAPEM()), func(c *oidc.VerifierConfig) {
		c.Now, c.KeyRefresh = clk.Now, mode
	})
	sign := func(k oidctest.Key) string {
		return oidctest.SignT(t, k, iss.Claims(acme.ClientID(), "alice@example.org", "tenant-acme-admin"))
	}
	return iss, clk, v, sign
}

// The tests below run KeyRefreshOnUnknownKey; keys_expiry_test.go runs
// the default, kube-apiserver 1.37's KeyRefreshOnExpiry.

func TestKeysRandomKidsCannotStorm(t *testing.T) {
	iss, _, v, sign := keysFixture(t, "max-age=600", oidc.KeyRefreshOnUnknownKey)
	ctx := context.Background()
	_, err := v.Verify(ctx, sign(iss.Key()))
	require.NoError(t, err)
	for range 200 {
		_, err := v.Verify(ctx, sign(oidctest.Key{ID: randomKid(), Algorithm: iss.Key().Algorithm, Private: iss.Key().Private}))
		require.ErrorIs(t, err, oidc.ErrUnknownKey)
	}
	// The clock stands still: the initial fetch plus the rest of the burst.
	require.LessOrEqual(t, iss.JWKSFetches(), 3)
	_, err = v.Verify(ctx, sign(iss.Key()))
	require.NoError(t, err, "known keys keep working")
}

func TestKeysRotationIsPickedUp(t *testing.T) {
	iss, clk, v, sign := keysFixture(t, "max-age=60", oidc.KeyRefreshOnUnknownKey)
	ctx := context.Background()
	old := iss.Key()
	_, err := v.Verify(ctx, sign(old))
	require.NoError(t, err)

	// A new key: its first token makes the verifier refetch.
	next := iss.RotateKeyT(t)
	_, err = v.Verify(ctx, sign(next))
	require.NoError(t, err)
	require.Equal(t, 2, iss.JWKSFetches())

	// The old key leaves the JWKS: once the cache's max-age has passed, the
	// background revalidation drops it.
	iss.RemoveKey(old.ID)
	clk.Add(61 * time.Second)
	require.Eventually(t, func() bool {
		_, err := v.Verify(ctx, sign(old))
		return err != nil
	}, 10*time.Second, 20*time.Millisecond)
	_, err = v.Verify(ctx, sign(old))
	require.ErrorIs(t, err, oidc.ErrUnknownKey)
	_, err = v.Verify(ctx, sign(next))
	require.NoError(t, err)
}

func TestKeysHonourCacheControl(t *testing.T) {
	iss, clk, v, sign := keysFixture(t, "public, max-age=300", oidc.KeyRefreshOnUnknownKey)
	ctx := context.Background()
	tok := sign(iss.Key())
	for range 10 {
		_, err := v.Verify(ctx, tok)
		require.NoError(t, err)
	}
	require.Equal(t, 1, iss.JWKSFetches(), "fresh for max-age")
	clk.Add(299 * time.Second)
	_, err := v.Verify(ctx, tok)
	require.NoError(t, err)
	require.Equal(t, 1, iss.JWKSFetches())
	clk.Add(2 * time.Second)
	_, err = v.Verify(ctx, tok)
	require.NoError(t, err, "stale keys still verify")
	require.Eventually(t, func() bool { return iss.JWKSFetches() == 2 }, 5*time.Second, 10*time.Millisecond,
		"revalidated in the background")
}

func TestKeysNoCacheRevalidatesWithinTheRateLimit(t *testing.T) {
	iss, clk, v, sign := keysFixture(t, "no-cache", oidc.KeyRefreshOnUnknownKey)
	ctx := context.Background()
	tok := sign(iss.Key())
	for range 50 {
		_, err := v.Verify(ctx, tok)
		require.NoError(t, err)
		time.Sleep(time.Millisecond)
	}
	require.LessOrEqual(t, iss.JWKSFetches(), 3, "burst of three, clock standing still")
	clk.Add(time.Minute)
	_, err := v.Verify(ctx, tok)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return iss.JWKSFetches() > 1 }, 5*time.Second, 10*time.Millisecond)
}

func TestKeysServeCachedKeysWhileIssuerIsDown(t *testing.T) {
	iss, clk, v, sign := keysFixture(t, "max-age=60", oidc.KeyRefreshOnUnknownKey)
	ctx := context.Background()
	tok := sign(iss.Key())
	_, err := v.Verify(ctx, tok)
	require.NoError(t, err)
	iss.SetDown(true)
	for range 5 {
		clk.Add(2 * time.Minute)
		_, err := v.Verify(ctx, tok)
		require.NoError(t, err)
	}
	_, err = v.Verify(ctx, sign(oidctest.GenerateKeyT(t, iss.Key().Algorithm)))
	require.ErrorIs(t, err, oidc.ErrUnknownKey)
}

func TestKeysUnavailableWithoutCache(t *testing.T) {
	iss, _, v, sign := keysFixture(t, "max-age=60", oidc.KeyRefreshOnUnknownKey)
	iss.SetDown(true)
	_, err := v.Verify(context.Background(), sign(iss.Key()))
	require.ErrorIs(t, err, oidc.ErrKeysUnavailable)
	iss.SetDown(false)
	_, err = v.Verify(context.Background(), sign(iss.Key()))
	require.NoError(t, err, "recovers once the issuer is back")
}

func TestStaticKeysNeedNoIssuer(t *testing.T) {
	iss := oidctest.StartT(t, oidctest.Config{Algorithm: "ES384"})
	v := newVerifier(t, oidc.JWTAuthenticator(acme, "https://offline.example.org", nil), func(c *oidc.VerifierConfig) { c.Keys = iss.PublicKeys() })
	claims := iss.Claims(acme.ClientID(), "alice@example.org", "tenant-acme-admin")
	claims["iss"] = "https://offline.example.org"
	user, err := v.Verify(context.Background(), oidctest.SignT(t, iss.Key(), claims))
	require.NoError(t, err)
	require.Equal(t, "alice@example.org", user.Username)
	require.Zero(t, iss.JWKSFetches())
}

var kidSeq atomic.Int64

func randomKid() string { return fmt.Sprintf("random-%d", kidSeq.Add(1)) }

func TestVerifierIsSafeForConcurrentUse(t *testing.T) {
	const workers, rounds = 8, 30
	iss, clk, v, sign := keysFixture(t, "no-cache", oidc.KeyRefreshOnUnknownKey)
	good := sign(iss.Key())
	// Every third token names a kid the issuer never published; all are
	// signed here, as sign may stop the test and only the test goroutine may.
	toks := make([][]string, workers)
	for i := range toks {
		toks[i] = make([]string, rounds)
		for j := range toks[i] {
			toks[i][j] = good
			if (i+j)%3 == 0 {
				toks[i][j] = sign(oidctest.Key{ID: randomKid(), Algorithm: iss.Key().Algorithm, Private: iss.Key().Private})
			}
		}
	}
	// Each worker records every result; the test goroutine asserts on them.
	errs := make([][]error, workers)
	var wg sync.WaitGroup
	for i := range workers {
		errs[i] = make([]error, rounds)
		wg.Go(func() {
			for j := range rounds {
				if j%10 == 0 {
					clk.Add(time.Second)
				}
				_, errs[i][j] = v.Verify(context.Background(), toks[i][j])
			}
		})
	}
	wg.Wait()
	for i := range workers {
		for j, tok := range toks[i] {
			if tok == good {
				require.NoError(t, errs[i][j], "worker %d, call %d", i, j)
			} else {
				require.ErrorIs(t, errs[i][j], oidc.ErrUnknownKey, "worker %d, call %d", i, j)
			}
		}
	}
}
