package oidc

import (
	"bytes"
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

	gooidc "github.com/coreos/go-oidc/v3/oidc"
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

// keySet is the Verifier's cache of the issuer's keys. go-oidc's
// RemoteKeySet does the signature checks (reusing the JWS go-oidc's
// verifier already parsed), but it fetches its keys from this cache through
// an in-process transport, so the cache decides when the network is used:
//   - a kid not among the cached keys triggers a refetch, rate-limited so
//     that tokens with random kids cannot cause a storm;
//   - keys are fresh for the response's Cache-Control max-age (no-cache and
//     no-store: revalidate on next use), DefaultKeyTTL without one;
//   - stale keys keep verifying while a background refetch runs, and stay
//     in use while the issuer is down;
//   - a refetch that changes the set replaces go-oidc's key set, so keys
//     the issuer removed stop verifying.
type keySet struct {
	url     string
	client  *http.Client
	now     func() time.Time
	ttl     time.Duration
	limiter *rate.Limiter
	log     *slog.Logger

	cur        atomic.Pointer[snapshot]
	mu         sync.Mutex
	inflight   chan struct{} // closed when the running fetch ends
	background atomic.Bool
	fetches    atomic.Int64
}

// snapshot is one fetched JWKS and the go-oidc key set that serves it.
type snapshot struct {
	body    []byte // the usable keys, re-encoded
	ids     map[string]bool
	expires time.Time // zero: never (static keys)
	inner   *gooidc.RemoteKeySet
	served  *atomic.Bool // inner has loaded body; another load is a kid miss
}

func newStaticKeySet(set jose.JSONWebKeySet) (*keySet, error) {
	ks := &keySet{now: time.Now}
	snap, err := ks.snapshot(set.Keys, time.Time{}, nil)
	if err != nil {
		return nil, err
	}
	ks.cur.Store(snap)
	return ks, nil
}

// snapshot builds a snapshot of keys; prev's go-oidc key set is kept when
// the keys did not change.
func (ks *keySet) snapshot(keys []jose.JSONWebKey, expires time.Time, prev *snapshot) (*snapshot, error) {
	usable := jose.JSONWebKeySet{Keys: make([]jose.JSONWebKey, 0, len(keys))}
	ids := map[string]bool{}
	for _, k := range keys {
		// Like the apiserver, "use" is not consulted: an "enc" key that
		// signed a token still verifies it.
		usable.Keys = append(usable.Keys, k)
		ids[k.KeyID] = true
	}
	body, err := json.Marshal(usable)
	if err != nil {
		return nil, fmt.Errorf("encode JWKS: %w", err)
	}
	if prev != nil && bytes.Equal(prev.body, body) {
		return &snapshot{body: body, ids: ids, expires: expires, inner: prev.inner, served: prev.served}, nil
	}
	snap := &snapshot{body: body, ids: ids, expires: expires, served: &atomic.Bool{}}
	client := &http.Client{Transport: snapshotTransport{ks: ks, snap: snap}}
	snap.inner = gooidc.NewRemoteKeySet(gooidc.ClientContext(context.Background(), client), "https://jwks.cache.invalid/keys")
	return snap, nil
}

// snapshotTransport answers go-oidc's JWKS requests from the cache. The
// first request loads the snapshot; a later one means go-oidc met a kid
// it does not have, so the cache refetches (rate-limited) first.
type snapshotTransport struct {
	ks   *keySet
	snap *snapshot
}

func (t snapshotTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	snap := t.snap
	if t.snap.served.Swap(true) {
		if fresh, _ := t.ks.refresh(r.Context()); fresh != nil {
			snap = fresh
		}
	}
	return &http.Response{StatusCode: http.StatusOK, Status: "200 OK", Request: r,
		Header: http.Header{"Content-Type": {"application/json"}},
		Body:   io.NopCloser(bytes.NewReader(snap.body))}, nil
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
// returns the payload. go-oidc's verifier calls it after checking the
// algorithm.
func (ks *keySet) VerifySignature(ctx context.Context, raw string) ([]byte, error) {
	st, _ := ctx.Value(stateKey{}).(*verifyState)
	payload, err := ks.verify(ctx, raw)
	if st != nil {
		st.payload, st.err = payload, err
	}
	return payload, err
}

func (ks *keySet) verify(ctx context.Context, raw string) ([]byte, error) {
	snap := ks.cur.Load()
	if snap == nil { // first use
		var err error
		if snap, err = ks.refresh(ctx); snap == nil {
			return nil, err
		}
	}
	payload, err := snap.inner.VerifySignature(ctx, raw)
	if err == nil {
		if ks.stale(snap) && !ks.background.Swap(true) {
			go func() {
				defer ks.background.Store(false)
				_, _ = ks.refresh(context.Background())
			}()
		}
		return payload, nil
	}
	// The failure path: work out why.
	if strings.Contains(err.Error(), "fetching keys") {
		return nil, fmt.Errorf("%w: %w", ErrKeysUnavailable, err)
	}
	jws, perr := jose.ParseSigned(raw, signingAlgorithms)
	if perr != nil {
		return nil, &MalformedTokenError{Reason: "JWS: " + perr.Error()}
	}
	kid := jws.Signatures[0].Header.KeyID
	if latest := ks.cur.Load(); latest.ids[kid] || (kid == "" && len(latest.ids) > 0) {
		return nil, ErrInvalidSignature
	}
	return nil, &UnknownKeyError{KeyID: kid}
}

func (ks *keySet) stale(snap *snapshot) bool {
	return ks.url != "" && !snap.expires.IsZero() && !ks.now().Before(snap.expires)
}

// refresh fetches the JWKS unless the rate limit says no, sharing a fetch
// already in flight. It returns the snapshot to use (nil only when nothing
// was ever fetched) and the fetch error, if any.
func (ks *keySet) refresh(ctx context.Context) (*snapshot, error) {
	if ks.url == "" {
		return ks.cur.Load(), nil
	}
	ks.mu.Lock()
	wait := ks.inflight
	if wait == nil {
		if !ks.limiter.AllowN(ks.now(), 1) {
			ks.mu.Unlock()
			if snap := ks.cur.Load(); snap != nil {
				return snap, nil
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
		if snap := ks.cur.Load(); snap != nil {
			return snap, err
		}
		return nil, fmt.Errorf("%w: %w", ErrKeysUnavailable, err)
	}
	ks.mu.Unlock()
	select {
	case <-wait:
	case <-ctx.Done():
		return ks.cur.Load(), ctx.Err()
	}
	if snap := ks.cur.Load(); snap != nil {
		return snap, nil
	}
	return nil, fmt.Errorf("%w: JWKS fetch failed", ErrKeysUnavailable)
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
	expires := ks.now().Add(maxAge(resp.Header.Get("Cache-Control"), ks.ttl))
	snap, err := ks.snapshot(keys, expires, ks.cur.Load())
	if err != nil {
		return err
	}
	ks.cur.Store(snap)
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
