package oidc

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/apiserver/pkg/apis/apiserver"
	authenticationcel "k8s.io/apiserver/pkg/authentication/cel"

	"github.com/cozystack/tenantkit/oidc/internal/jose"
)

// Verifier defaults, matching kube-apiserver 1.37.
const (
	// defaultNotBeforeLeeway is the clock skew allowed on nbf (go-oidc v2,
	// used by kube-apiserver up to 1.37; 1.38 moves to 5 minutes).
	defaultNotBeforeLeeway = time.Minute
	// DefaultMaxTokenBytes bounds the token length: kube-apiserver does not
	// read request headers beyond 1 MiB, so no longer token can reach it.
	DefaultMaxTokenBytes = 1 << 20
)

// VerifierConfig configures a Verifier. Only JWT is required; the zero
// values of the other fields are kube-apiserver 1.37's behaviour.
type VerifierConfig struct {
	// JWT is one jwt entry of an AuthenticationConfiguration: issuer,
	// audiences, claim mappings and validation rules. It is validated and
	// compiled by k8s.io/apiserver, as the apiserver does at start.
	JWT apiserver.JWTAuthenticator
	// DisallowedIssuers are the apiserver's --service-account-issuer values.
	DisallowedIssuers []string
	// HTTPClient fetches discovery and keys. Default: a client trusting
	// JWT.Issuer.CertificateAuthority (system roots when empty), with a 30s
	// timeout.
	HTTPClient *http.Client
	// Keys, when not nil, are the issuer's keys: no discovery, no
	// fetching.
	Keys []PublicKey
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// NotBeforeLeeway is the skew allowed on nbf. Default one minute
	// (go-oidc v2, used by kube-apiserver up to 1.37; 1.38 moves to 5
	// minutes).
	NotBeforeLeeway time.Duration
	// MaxTokenBytes bounds the token length. Default DefaultMaxTokenBytes.
	MaxTokenBytes int
	// KeyRefresh says when the JWKS is fetched again. Default
	// KeyRefreshOnExpiry, kube-apiserver 1.37's behaviour.
	KeyRefresh KeyRefresh
	// KeyRefreshInterval is the sustained rate of JWKS refetches with
	// KeyRefreshOnUnknownKey (bursts of three). Default 10s, as in
	// kube-apiserver 1.38.
	KeyRefreshInterval time.Duration
	// KeyTTL is how long keys stay fresh with KeyRefreshOnUnknownKey when
	// the JWKS response has no Cache-Control max-age. Default 5 minutes.
	KeyTTL time.Duration
	// SkipInvalidKeys drops JWKS entries that do not decode (an unknown
	// kty, an X25519 key, an x5u ...) instead of refusing the whole set,
	// as RFC 7517 section 5 recommends and go-oidc v3 does. Off, a JWKS
	// with such an entry fails every token, as on kube-apiserver 1.37
	// (the error wraps ErrKeysUnavailable and ErrInvalidKeySet).
	SkipInvalidKeys bool
	// BackgroundDiscovery lets NewVerifier return when the issuer cannot
	// be discovered (down, unreachable, a bad document), like
	// kube-apiserver: Verify then fails with ErrNotReady while discovery
	// is retried in the background (backing off from one second up to
	// DiscoveryRetryInterval) until it succeeds, Close is called or
	// NewVerifier's ctx is done. Off, NewVerifier returns the error.
	BackgroundDiscovery bool
	// DiscoveryRetryInterval is the longest wait between background
	// discovery attempts. Default 10s (the apiserver's period).
	DiscoveryRetryInterval time.Duration
	// TokenCache configures the verified-token cache; off by default.
	TokenCache TokenCacheConfig
	// Logger receives key-fetch and discovery warnings. Default: discard.
	Logger *slog.Logger
}

// Verifier checks bearer tokens exactly as a kube-apiserver configured with
// one JWT authenticator does, but returns why a token was rejected. It is
// safe for concurrent use.
type Verifier struct {
	cfg      VerifierConfig
	jwt      apiserver.JWTAuthenticator
	mapper   authenticationcel.CELMapper
	usesCEL  bool
	gates    []*groupsGate // the claim validation rules, when all are tenant gates
	required map[string]string
	now      func() time.Time
	cache    *tokenCache
	headers  jose.HeaderCache

	keys     atomic.Pointer[keySet] // nil until discovered
	notReady atomic.Pointer[NotReadyError]
	ctx      context.Context // cancelled by Close: background work stops
	cancel   context.CancelFunc
	done     chan struct{} // closed when background discovery has ended
	close    sync.Once
}

// UserInfo is the user a token maps to, as the apiserver would see it.
type UserInfo struct {
	// Username is the mapped username (in System mode, the email).
	Username string
	// UID is the mapped uid; empty without a uid mapping.
	UID string
	// Groups are the mapped groups, prefixed as configured.
	Groups []string
	// Extra holds the extra mappings and the credential ID of a token
	// with a jti.
	Extra map[string][]string
}

// NewVerifier validates cfg.JWT with the apiserver's validation, compiles
// its CEL expressions with the apiserver's compiler and, unless cfg.Keys is
// set, discovers the issuer (ctx bounds the discovery request; with
// BackgroundDiscovery it is also the lifetime of the retries). Keys are
// fetched on first use. Call Close when done with the verifier.
func NewVerifier(ctx context.Context, cfg VerifierConfig) (*Verifier, error) {
	mapper, err := compileJWT(cfg.JWT, cfg.DisallowedIssuers)
	if err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	v := &Verifier{cfg: cfg, jwt: cfg.JWT, mapper: mapper, now: cfg.Now, required: map[string]string{},
		done: make(chan struct{})}
	v.ctx, v.cancel = context.WithCancel(context.WithoutCancel(ctx))
	v.gates = tenantGates(cfg.JWT.ClaimValidationRules)
	v.usesCEL = mapper.Username != nil || mapper.Groups != nil || mapper.UID != nil || mapper.Extra != nil ||
		(mapper.ClaimValidationRules != nil && v.gates == nil)
	for _, r := range cfg.JWT.ClaimValidationRules {
		if r.Claim != "" {
			v.required[r.Claim] = r.RequiredValue
		}
	}
	v.cache = newTokenCache(cfg.TokenCache)
	if cfg.Keys != nil {
		ks, err := newStaticKeySet(cfg.Keys)
		if err != nil {
			v.cancel()
			return nil, err
		}
		v.keys.Store(ks)
		close(v.done)
		return v, nil
	}
	client, err := cfg.httpClient()
	if err == nil {
		err = v.startDiscovery(ctx, client)
	}
	if err != nil {
		v.cancel()
		return nil, err
	}
	return v, nil
}

// newRemoteKeySet is the key cache for a discovered JWKS URL.
func (v *Verifier) newRemoteKeySet(jwksURL string, client *http.Client) *keySet {
	ks := &keySet{url: jwksURL, client: client, now: v.cfg.Now, mode: v.cfg.KeyRefresh, skipInvalid: v.cfg.SkipInvalidKeys,
		ttl: v.cfg.KeyTTL, log: v.cfg.Logger, ctx: v.ctx, onChange: v.cache.clear}
	if v.cfg.KeyRefresh == KeyRefreshOnUnknownKey {
		ks.limiter = rate.NewLimiter(rate.Every(v.cfg.KeyRefreshInterval), keyRefreshBurst)
	}
	return ks
}

// Close stops background work (discovery retries, key fetches). Verify
// keeps answering from what the verifier has; a key fetch after Close
// fails. Close on a nil *Verifier (what NewVerifier returns with an error)
// does nothing.
func (v *Verifier) Close() error {
	if v == nil {
		return nil
	}
	v.close.Do(func() {
		v.cancel()
		<-v.done
	})
	return nil
}

// Ready returns nil once the issuer has been discovered, a
// *NotReadyError (wrapping ErrNotReady) before.
func (v *Verifier) Ready() error {
	if v.keys.Load() != nil {
		return nil
	}
	if nr := v.notReady.Load(); nr != nil {
		return nr
	}
	return &NotReadyError{Issuer: v.jwt.Issuer.URL, Err: ErrNotReady}
}

// tenantGates returns the expression rules as native gates when every one
// of them is a tenant groups gate, nil otherwise.
func tenantGates(rules []apiserver.ClaimValidationRule) []*groupsGate {
	var gates []*groupsGate
	for _, r := range rules {
		if r.Expression == "" {
			continue
		}
		g, ok := parseGroupsGate(r)
		if !ok {
			return nil
		}
		gates = append(gates, g)
	}
	return gates
}

func (cfg VerifierConfig) withDefaults() VerifierConfig {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.NotBeforeLeeway == 0 {
		cfg.NotBeforeLeeway = defaultNotBeforeLeeway
	}
	if cfg.MaxTokenBytes == 0 {
		cfg.MaxTokenBytes = DefaultMaxTokenBytes
	}
	if cfg.KeyRefreshInterval == 0 {
		cfg.KeyRefreshInterval = defaultKeyRefreshInterval
	}
	if cfg.KeyTTL == 0 {
		cfg.KeyTTL = defaultKeyTTL
	}
	if cfg.DiscoveryRetryInterval == 0 {
		cfg.DiscoveryRetryInterval = defaultDiscoveryRetryInterval
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return cfg
}

func (cfg VerifierConfig) httpClient() (*http.Client, error) {
	if cfg.HTTPClient != nil {
		return cfg.HTTPClient, nil
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if ca := cfg.JWT.Issuer.CertificateAuthority; ca != "" {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM([]byte(ca)) {
			return nil, invalidf("issuer.certificateAuthority holds no PEM certificate")
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}, nil
}
