package oidc

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	gojose "github.com/go-jose/go-jose/v4"
	"github.com/pquerna/cachecontrol"
	"golang.org/x/time/rate"

	"github.com/cozystack/tenantkit/oidc/internal/jose"
)

// KeyRefresh says when a Verifier fetches the issuer's JWKS again.
type KeyRefresh int

const (
	// KeyRefreshOnExpiry is kube-apiserver 1.37's behaviour (go-oidc v2),
	// the default. Keys are fetched on first use and kept. A token that no
	// cached key verifies (an unknown kid, a bad signature) makes the
	// verifier fetch again only if the cached set has expired, or expires
	// within 30 seconds; the set expires when the JWKS response says
	// (Cache-Control s-maxage or max-age, else Expires, else a tenth of
	// the age since Last-Modified, up to a day; without any, at once).
	// Cached keys verify until a fetch replaces them, also while the
	// issuer is down; fetches are not rate-limited.
	//
	// So, as on a 1.37 apiserver, a token signed with a newly rotated-in
	// key is refused until the cached set expires (up to the max-age) and
	// a key the issuer removed keeps verifying until a fetch happens.
	KeyRefreshOnExpiry KeyRefresh = iota
	// KeyRefreshOnUnknownKey fetches the JWKS again as soon as a token
	// names a kid the cache does not hold (OpenID Connect Core 10.1.1,
	// as go-oidc v3 and kube-apiserver 1.38 do), rate-limited to one fetch
	// per KeyRefreshInterval with bursts of three so that tokens with
	// random kids cannot storm the issuer. Beyond 1.38, keys are also
	// revalidated in the background once the response's max-age has
	// passed (KeyTTL without one), so removed keys stop verifying.
	KeyRefreshOnUnknownKey
)

// Key cache defaults.
const (
	// defaultKeyTTL is how long fetched keys count as fresh with
	// KeyRefreshOnUnknownKey when the JWKS response carries no
	// Cache-Control max-age.
	defaultKeyTTL = 5 * time.Minute
	// defaultKeyRefreshInterval is the sustained rate of JWKS fetches with
	// KeyRefreshOnUnknownKey (one per interval, bursts of three), as in
	// kube-apiserver 1.38.
	defaultKeyRefreshInterval = 10 * time.Second
	keyRefreshBurst           = 3
	// keysExpiryDelta is go-oidc v2's allowance: keys expiring within it
	// count as expired.
	keysExpiryDelta = 30 * time.Second
	maxJWKSBytes    = 1 << 20
)

// keySet is the Verifier's cache of the issuer's keys, parsed once.
type keySet struct {
	url         string // "" for static keys
	client      *http.Client
	now         func() time.Time
	mode        KeyRefresh
	skipInvalid bool
	ttl         time.Duration
	limiter     *rate.Limiter
	log         *slog.Logger
	ctx         context.Context // the verifier's lifetime: fetches use it
	onChange    func()          // called when a fetch changes the keys

	cur        atomic.Pointer[keySnapshot]
	mu         sync.Mutex
	inflight   *fetchCall
	background atomic.Bool
	fetches    atomic.Int64
}

// keySnapshot is one fetched JWKS.
type keySnapshot struct {
	keys []jose.Key
	// expiry: KeyRefreshOnExpiry refetches after a failure past it;
	// KeyRefreshOnUnknownKey revalidates in the background past it. Zero
	// for static keys.
	expiry time.Time
	digest [sha256.Size]byte // of the JWKS body: a change clears the token cache
}

// fetchCall is a JWKS fetch in flight; concurrent callers share it.
type fetchCall struct {
	done chan struct{}
	snap *keySnapshot
	err  error
}

func newStaticKeySet(set []PublicKey) (*keySet, error) {
	keys := make([]jose.Key, 0, len(set))
	for _, k := range set {
		raw, err := gojose.JSONWebKey{Key: k.Key, KeyID: k.ID, Use: "sig"}.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("%w: static key %q: %w", ErrInvalidConfig, k.ID, err)
		}
		parsed, err := jose.DecodeKey(raw)
		if err != nil {
			return nil, fmt.Errorf("%w: static key %q: %w", ErrInvalidConfig, k.ID, err)
		}
		keys = append(keys, parsed)
	}
	ks := &keySet{now: time.Now}
	ks.cur.Store(&keySnapshot{keys: keys})
	return ks, nil
}

// verify checks t's signature with the cached keys, fetching them again
// as the refresh mode says.
func (ks *keySet) verify(ctx context.Context, t *jose.JWS) error {
	hashed := jose.Digest(t.Alg, t.SigningInput)
	snap := ks.cur.Load()
	if snap != nil {
		res := snap.try(t, hashed)
		if res.ok {
			ks.revalidate(snap)
			return nil
		}
		if !ks.shouldFetch(snap, t) {
			return res.err(t)
		}
	}
	fresh, err := ks.refresh(ctx)
	if err != nil {
		if snap != nil && ks.mode == KeyRefreshOnUnknownKey {
			return snap.try(t, hashed).err(t) // rate-limited or down: the cached keys answer
		}
		return fmt.Errorf("%w: %w", ErrKeysUnavailable, err)
	}
	res := fresh.try(t, hashed)
	if res.ok {
		return nil
	}
	return res.err(t)
}

// shouldFetch decides, after the cached keys failed t, whether to fetch.
func (ks *keySet) shouldFetch(snap *keySnapshot, t *jose.JWS) bool {
	if ks.url == "" {
		return false
	}
	if ks.mode == KeyRefreshOnUnknownKey {
		for _, k := range snap.keys {
			if k.ID == t.KeyID || t.KeyID == "" {
				return false // a known key: the signature is wrong, not the cache
			}
		}
		return true
	}
	return ks.now().Add(keysExpiryDelta).After(snap.expiry)
}

// revalidate starts a background fetch when KeyRefreshOnUnknownKey's
// cached keys are stale.
func (ks *keySet) revalidate(snap *keySnapshot) {
	if ks.mode != KeyRefreshOnUnknownKey || ks.url == "" || ks.now().Before(snap.expiry) || ks.background.Swap(true) {
		return
	}
	go func() {
		defer ks.background.Store(false)
		_, _ = ks.refresh(ks.ctx)
	}()
}

// refresh fetches the JWKS, sharing a fetch already in flight. With
// KeyRefreshOnUnknownKey a new fetch needs the rate limiter's consent.
func (ks *keySet) refresh(ctx context.Context) (*keySnapshot, error) {
	ks.mu.Lock()
	call := ks.inflight
	if call == nil {
		if ks.limiter != nil && !ks.limiter.AllowN(ks.now(), 1) {
			ks.mu.Unlock()
			return nil, fmt.Errorf("JWKS refetch rate-limited")
		}
		call = &fetchCall{done: make(chan struct{})}
		ks.inflight = call
		// Like go-oidc, the fetch runs on its own: a caller that gives up
		// does not cancel it for the others.
		go func() {
			call.snap, call.err = ks.fetch()
			ks.mu.Lock()
			ks.inflight = nil
			ks.mu.Unlock()
			close(call.done)
		}()
	}
	ks.mu.Unlock()
	select {
	case <-call.done:
		return call.snap, call.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// fetch GETs and decodes the JWKS and installs it. On failure the cached
// keys stay.
func (ks *keySet) fetch() (*keySnapshot, error) {
	ks.fetches.Add(1)
	req, err := http.NewRequestWithContext(ks.ctx, http.MethodGet, ks.url, nil)
	if err != nil {
		return nil, fmt.Errorf("fetch JWKS: %w", err)
	}
	resp, err := ks.client.Do(req)
	if err != nil {
		ks.log.Warn("fetch JWKS failed; keeping cached keys", "url", ks.url, "err", err)
		return nil, fmt.Errorf("fetch JWKS: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes))
	if err != nil {
		return nil, fmt.Errorf("fetch JWKS: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		ks.log.Warn("fetch JWKS failed; keeping cached keys", "url", ks.url, "status", resp.Status)
		return nil, fmt.Errorf("fetch JWKS: %s", resp.Status)
	}
	digest := sha256.Sum256(body)
	var keys []jose.Key
	if old := ks.cur.Load(); old != nil && old.digest == digest {
		keys = old.keys // the same document: keep its keys, ES256 tables included
	} else if keys, err = jose.ParseKeySet(body, ks.skipInvalid); err != nil {
		ks.log.Warn("JWKS does not decode; keeping cached keys", "url", ks.url, "err", err)
		return nil, err // a *KeySetError
	}
	snap := &keySnapshot{keys: keys, expiry: ks.expiry(req, resp), digest: digest}
	if old := ks.cur.Swap(snap); old == nil || old.digest != snap.digest {
		if ks.onChange != nil {
			ks.onChange()
		}
	}
	ks.log.Debug("fetched JWKS", "url", ks.url, "keys", len(keys))
	return snap, nil
}

// expiry is when the fetched keys expire: go-oidc v2's computation
// (pquerna/cachecontrol, at once without caching headers) for
// KeyRefreshOnExpiry, max-age or KeyTTL for KeyRefreshOnUnknownKey.
func (ks *keySet) expiry(req *http.Request, resp *http.Response) time.Time {
	now := ks.now()
	if ks.mode == KeyRefreshOnUnknownKey {
		return now.Add(maxAge(resp.Header.Get("Cache-Control"), ks.ttl))
	}
	wall := time.Now()
	_, e, err := cachecontrol.CachableResponse(req, resp, cachecontrol.Options{})
	if err != nil || !e.After(wall) {
		return now
	}
	return now.Add(e.Sub(wall))
}

// maxAge reads how long a response may be cached: max-age, zero for
// no-cache and no-store, def when the header says nothing.
func maxAge(cacheControl string, def time.Duration) time.Duration {
	age := def
	for _, d := range strings.Split(cacheControl, ",") {
		name, val, _ := strings.Cut(strings.TrimSpace(strings.ToLower(d)), "=")
		switch name {
		case "no-cache", "no-store":
			return 0
		case "max-age":
			if n, err := strconv.ParseInt(strings.Trim(val, `"`), 10, 64); err == nil && n >= 0 {
				age = time.Duration(n) * time.Second
			}
		}
	}
	return age
}
