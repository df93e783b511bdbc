package oidc

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"golang.org/x/time/rate"
)

// Key cache defaults.
const (
	// DefaultKeyTTL is how long fetched keys count as fresh when the JWKS
	// response carries no Cache-Control max-age.
	DefaultKeyTTL = 5 * time.Minute
	// DefaultKeyRefreshInterval is the sustained rate of JWKS fetches
	// (one per interval, bursts of three), as in kube-apiserver 1.38.
	DefaultKeyRefreshInterval = 10 * time.Second
	keyRefreshBurst           = 3
	maxJWKSBytes              = 1 << 20
)

// signingAlgorithms are those kube-apiserver accepts with
// --authentication-config (oidc.AllValidSigningAlgorithms).
var signingAlgorithms = []jose.SignatureAlgorithm{
	jose.ES256, jose.ES384, jose.ES512, jose.PS256, jose.PS384, jose.PS512, jose.RS256, jose.RS384, jose.RS512,
}

// keySet implements go-oidc's KeySet over a cached JWKS:
//   - keys are looked up by kid; a kid not in the cache triggers a refetch,
//     rate-limited so that tokens with random kids cannot cause a storm;
//   - the cache is fresh for the response's Cache-Control max-age (no-cache
//     and no-store: revalidate on next use), DefaultKeyTTL without one;
//   - stale keys keep verifying while a background refetch runs, and stay
//     in use when the issuer is down;
//   - a refetch replaces the set, so keys the issuer removed stop verifying.
type keySet struct {
	url     string
	client  *http.Client
	now     func() time.Time
	ttl     time.Duration
	limiter *rate.Limiter
	log     *slog.Logger

	cur atomic.Pointer[keyIndex]

	mu       sync.Mutex
	inflight chan struct{} // closed when the running fetch ends
	fetches  atomic.Int64
}

// keyIndex is one fetched JWKS.
type keyIndex struct {
	byID    map[string][]jose.JSONWebKey
	all     []jose.JSONWebKey
	expires time.Time // zero: never (static keys)
}

func newStaticKeySet(set jose.JSONWebKeySet) *keySet {
	ks := &keySet{now: time.Now}
	ks.cur.Store(indexKeys(set.Keys, time.Time{}))
	return ks
}

func indexKeys(keys []jose.JSONWebKey, expires time.Time) *keyIndex {
	idx := &keyIndex{byID: map[string][]jose.JSONWebKey{}, expires: expires}
	for _, k := range keys {
		if k.Use != "" && k.Use != "sig" {
			continue
		}
		idx.all = append(idx.all, k)
		idx.byID[k.KeyID] = append(idx.byID[k.KeyID], k)
	}
	return idx
}

// stateKey carries a *verifyState through go-oidc's Verify to the key set.
type stateKey struct{}

// verifyState records what the key set found, so that the Verifier can
// return a typed reason instead of go-oidc's flattened message.
type verifyState struct {
	payload []byte
	err     error
}

// VerifySignature verifies the JWS signature with the issuer's keys and
// returns the payload. go-oidc calls it after checking the algorithm.
func (ks *keySet) VerifySignature(ctx context.Context, raw string) ([]byte, error) {
	st, _ := ctx.Value(stateKey{}).(*verifyState)
	payload, err := ks.verify(ctx, raw)
	if st != nil {
		st.payload, st.err = payload, err
	}
	return payload, err
}

func (ks *keySet) verify(ctx context.Context, raw string) ([]byte, error) {
	jws, err := jose.ParseSigned(raw, signingAlgorithms)
	if err != nil {
		return nil, &MalformedTokenError{Reason: "JWS: " + err.Error()}
	}
	kid := jws.Signatures[0].Header.KeyID
	idx := ks.cur.Load()
	if idx == nil { // first use
		if idx, err = ks.refresh(ctx); idx == nil {
			return nil, err
		}
	}
	if payload, found := idx.verify(jws, kid); payload != nil {
		if ks.stale(idx) {
			ks.refreshInBackground()
		}
		return payload, nil
	} else if found && !ks.stale(idx) {
		return nil, ErrInvalidSignature
	}
	// Unknown kid, or a known kid that fails on stale keys: refetch once.
	if fresh, _ := ks.refresh(ctx); fresh != nil {
		idx = fresh
	}
	payload, found := idx.verify(jws, kid)
	switch {
	case payload != nil:
		return payload, nil
	case found:
		return nil, ErrInvalidSignature
	default:
		return nil, &UnknownKeyError{KeyID: kid}
	}
}

// verify tries the keys with the token's kid (all keys when it has none).
// found says whether any candidate key existed.
func (idx *keyIndex) verify(jws *jose.JSONWebSignature, kid string) (payload []byte, found bool) {
	candidates := idx.all
	if kid != "" {
		candidates = idx.byID[kid]
	}
	for i := range candidates {
		if p, err := jws.Verify(&candidates[i]); err == nil {
			return p, true
		}
	}
	return nil, len(candidates) > 0
}

func (ks *keySet) stale(idx *keyIndex) bool {
	return ks.url != "" && !idx.expires.IsZero() && !ks.now().Before(idx.expires)
}

// refresh fetches the JWKS unless the rate limit says no, sharing a fetch
// already in flight. It returns the index to use (nil only when nothing
// was ever fetched) and the fetch error, if any.
func (ks *keySet) refresh(ctx context.Context) (*keyIndex, error) {
	if ks.url == "" {
		return ks.cur.Load(), nil
	}
	ks.mu.Lock()
	wait := ks.inflight
	if wait == nil {
		if !ks.limiter.AllowN(ks.now(), 1) {
			ks.mu.Unlock()
			if idx := ks.cur.Load(); idx != nil {
				return idx, nil
			}
			return nil, fmt.Errorf("%w: JWKS refetch rate-limited", ErrKeysUnavailable)
		}
		wait = make(chan struct{})
		ks.inflight = wait
		ks.mu.Unlock()
		err := ks.fetch(context.WithoutCancel(ctx))
		ks.mu.Lock()
		ks.inflight = nil
		ks.mu.Unlock()
		close(wait)
		if idx := ks.cur.Load(); idx != nil {
			return idx, err
		}
		return nil, fmt.Errorf("%w: %w", ErrKeysUnavailable, err)
	}
	ks.mu.Unlock()
	select {
	case <-wait:
	case <-ctx.Done():
		return ks.cur.Load(), ctx.Err()
	}
	if idx := ks.cur.Load(); idx != nil {
		return idx, nil
	}
	return nil, fmt.Errorf("%w: JWKS fetch failed", ErrKeysUnavailable)
}

func (ks *keySet) refreshInBackground() {
	go func() { _, _ = ks.refresh(context.Background()) }()
}

// fetch GETs the JWKS and installs it. Keys of unsupported types are
// skipped rather than failing the whole set.
func (ks *keySet) fetch(ctx context.Context) error {
	ks.fetches.Add(1)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ks.url, nil)
	if err != nil {
		return err
	}
	resp, err := ks.client.Do(req)
	if err != nil {
		ks.log.Warn("fetch JWKS failed; keeping cached keys", "url", ks.url, "err", err)
		return fmt.Errorf("fetch JWKS: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes))
	if err != nil {
		return fmt.Errorf("fetch JWKS: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		ks.log.Warn("fetch JWKS failed; keeping cached keys", "url", ks.url, "status", resp.Status)
		return fmt.Errorf("fetch JWKS: %s", resp.Status)
	}
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &set); err != nil {
		return fmt.Errorf("fetch JWKS: decode: %w", err)
	}
	keys := make([]jose.JSONWebKey, 0, len(set.Keys))
	for _, raw := range set.Keys {
		var k jose.JSONWebKey
		if err := k.UnmarshalJSON(raw); err != nil || !k.Valid() || !k.IsPublic() {
			ks.log.Debug("skip unusable JWKS entry", "url", ks.url)
			continue
		}
		keys = append(keys, k)
	}
	now := ks.now()
	ks.cur.Store(indexKeys(keys, now.Add(maxAge(resp.Header.Get("Cache-Control"), ks.ttl))))
	ks.log.Debug("fetched JWKS", "url", ks.url, "keys", len(keys))
	return nil
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
