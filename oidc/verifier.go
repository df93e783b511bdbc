package oidc

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	gooidc "github.com/coreos/go-oidc/v3/oidc"
	jose "github.com/go-jose/go-jose/v4"
	"golang.org/x/time/rate"
	"k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/apis/apiserver/validation"
	authenticationcel "k8s.io/apiserver/pkg/authentication/cel"
)

// Verifier defaults, matching kube-apiserver 1.37.
const (
	// DefaultNotBeforeLeeway is the clock skew allowed on nbf (go-oidc v2,
	// used by kube-apiserver up to 1.37; 1.38 moves to 5 minutes).
	DefaultNotBeforeLeeway = time.Minute
	// DefaultMaxTokenBytes bounds the token length: kube-apiserver does not
	// read request headers beyond 1 MiB, so no longer token can reach it.
	DefaultMaxTokenBytes = 1 << 20
)

// VerifierConfig configures a Verifier. Only JWT is required; the zero
// values of the other fields are the apiserver's behaviour.
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
	// Keys, when set, are the issuer's keys: no discovery, no fetching.
	Keys *jose.JSONWebKeySet
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// NotBeforeLeeway is the skew allowed on nbf. Default
	// DefaultNotBeforeLeeway.
	NotBeforeLeeway time.Duration
	// MaxTokenBytes bounds the token length. Default DefaultMaxTokenBytes.
	MaxTokenBytes int
	// KeyRefreshInterval is the sustained rate of JWKS refetches (bursts of
	// three). Default DefaultKeyRefreshInterval.
	KeyRefreshInterval time.Duration
	// KeyTTL is how long keys stay fresh without a Cache-Control max-age.
	// Default DefaultKeyTTL.
	KeyTTL time.Duration
	// Logger receives key-fetch warnings. Default: discard.
	Logger *slog.Logger
}

// Verifier checks bearer tokens exactly as a kube-apiserver configured with
// one JWT authenticator does, but returns why a token was rejected. It is
// safe for concurrent use.
type Verifier struct {
	cfg       VerifierConfig
	jwt       apiserver.JWTAuthenticator
	mapper    authenticationcel.CELMapper
	usesCEL   bool
	gates     []*groupsGate // the claim validation rules, when all are tenant gates
	required  map[string]string
	keys      *keySet
	signature *gooidc.IDTokenVerifier
	now       func() time.Time
}

// UserInfo is the user a token maps to, as the apiserver would see it.
type UserInfo struct {
	Username string
	UID      string
	Groups   []string
	Extra    map[string][]string
}

// NewVerifier validates cfg.JWT with the apiserver's validation, compiles
// its CEL expressions with the apiserver's compiler and, unless cfg.Keys is
// set, discovers the issuer (ctx bounds the discovery request). Keys are
// fetched on first use.
func NewVerifier(ctx context.Context, cfg VerifierConfig) (*Verifier, error) {
	mapper, errs := validation.CompileAndValidateJWTAuthenticator(celCompiler(), cfg.JWT, cfg.DisallowedIssuers)
	if len(errs) > 0 {
		return nil, &ConfigError{Errs: errs}
	}
	cfg = cfg.withDefaults()
	var err error
	v := &Verifier{cfg: cfg, jwt: cfg.JWT, mapper: mapper, now: cfg.Now, required: map[string]string{}}
	v.gates = tenantGates(cfg.JWT.ClaimValidationRules)
	v.usesCEL = mapper.Username != nil || mapper.Groups != nil || mapper.UID != nil || mapper.Extra != nil ||
		(mapper.ClaimValidationRules != nil && v.gates == nil)
	for _, r := range cfg.JWT.ClaimValidationRules {
		if r.Claim != "" {
			v.required[r.Claim] = r.RequiredValue
		}
	}
	if cfg.Keys != nil {
		if v.keys, err = newStaticKeySet(*cfg.Keys); err != nil {
			return nil, err
		}
	} else {
		var client *http.Client
		client, err = cfg.httpClient()
		if err != nil {
			return nil, err
		}
		var jwksURL string
		jwksURL, err = discover(ctx, client, cfg.JWT.Issuer)
		if err != nil {
			return nil, err
		}
		v.keys = &keySet{url: jwksURL, client: client, now: cfg.Now, ttl: cfg.KeyTTL, log: cfg.Logger,
			limiter: rate.NewLimiter(rate.Every(cfg.KeyRefreshInterval), keyRefreshBurst)}
	}
	algs := make([]string, len(signingAlgorithms))
	for i, a := range signingAlgorithms {
		algs[i] = string(a)
	}
	v.signature = gooidc.NewVerifier(cfg.JWT.Issuer.URL, v.keys, &gooidc.Config{
		SkipClientIDCheck: true, SkipExpiryCheck: true, SupportedSigningAlgs: algs, Now: cfg.Now,
	})
	return v, nil
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
		cfg.NotBeforeLeeway = DefaultNotBeforeLeeway
	}
	if cfg.MaxTokenBytes == 0 {
		cfg.MaxTokenBytes = DefaultMaxTokenBytes
	}
	if cfg.KeyRefreshInterval == 0 {
		cfg.KeyRefreshInterval = DefaultKeyRefreshInterval
	}
	if cfg.KeyTTL == 0 {
		cfg.KeyTTL = DefaultKeyTTL
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

// discover reads the issuer's discovery document with go-oidc (which
// insists that its issuer equals the configured URL byte for byte) and
// returns the JWKS URL.
func discover(ctx context.Context, client *http.Client, iss apiserver.Issuer) (string, error) {
	if iss.DiscoveryURL != "" {
		target, err := url.Parse(iss.DiscoveryURL)
		if err != nil {
			return "", invalidf("issuer.discoveryURL: %v", err)
		}
		c := *client
		c.Transport = &discoveryRewrite{base: transportOf(client), from: strings.TrimSuffix(iss.URL, "/") + "/.well-known/openid-configuration", to: target}
		client = &c
	}
	p, err := gooidc.NewProvider(gooidc.ClientContext(ctx, client), iss.URL)
	if err != nil {
		return "", fmt.Errorf("discover %s: %w", iss.URL, err)
	}
	var doc struct {
		JWKSURL string `json:"jwks_uri"`
	}
	if err := p.Claims(&doc); err != nil || doc.JWKSURL == "" {
		return "", fmt.Errorf("discover %s: no jwks_uri", iss.URL)
	}
	return doc.JWKSURL, nil
}

type discoveryRewrite struct {
	base http.RoundTripper
	from string
	to   *url.URL
}

func (d *discoveryRewrite) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.String() != d.from {
		return d.base.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	r.URL, r.Host = d.to, ""
	return d.base.RoundTrip(r)
}

func transportOf(c *http.Client) http.RoundTripper {
	if c.Transport != nil {
		return c.Transport
	}
	return http.DefaultTransport
}

// Verify checks a token the way the apiserver does and maps it to a user:
// untrusted issuer routing, signature and issuer (go-oidc v3), audience
// (any of), exp (no leeway), nbf (with leeway), the username claim (with the
// email_verified rule), groups, uid, extra, required claims, claim
// validation rules and user validation rules. A rejection wraps one of the
// ErrX reasons in rejection.go; it never contains the token.
func (v *Verifier) Verify(ctx context.Context, token string) (*UserInfo, error) {
	if len(token) > v.cfg.MaxTokenBytes {
		return nil, fmt.Errorf("%w: %d bytes, limit %d", ErrTokenTooLarge, len(token), v.cfg.MaxTokenBytes)
	}
	t, err := parseUnverified(token)
	if err != nil {
		return nil, err
	}
	if t.issuer != v.jwt.Issuer.URL {
		return nil, &IssuerMismatchError{Want: v.jwt.Issuer.URL, Got: t.issuer}
	}
	st := &verifyState{}
	idt, err := v.signature.Verify(context.WithValue(ctx, stateKey{}, st), token)
	if err != nil {
		return nil, v.signatureError(t, st, err)
	}
	if !slices.Equal(st.payload, t.payload) { // what we decoded is what was signed
		return nil, &MalformedTokenError{Reason: "payload differs from the signed payload"}
	}
	if err := v.checkTimes(t, idt); err != nil {
		return nil, err
	}
	return v.mapUser(ctx, t.claims)
}

// signatureError turns go-oidc's error into a typed reason.
func (v *Verifier) signatureError(t *parsedToken, st *verifyState, err error) error {
	if st.err != nil {
		return st.err
	}
	alg, ok := t.header()
	if !ok {
		return &MalformedTokenError{Reason: "header is not base64url"}
	}
	if alg != "" && !slices.Contains(signingAlgorithms, jose.SignatureAlgorithm(alg)) {
		return &AlgorithmError{Algorithm: alg}
	}
	msg := strings.TrimPrefix(err.Error(), "oidc: ")
	if strings.HasPrefix(msg, "id token issued by a different provider") {
		return &IssuerMismatchError{Want: v.jwt.Issuer.URL, Got: t.issuer}
	}
	return &MalformedTokenError{Reason: msg}
}

// checkTimes checks aud, exp and nbf in the apiserver's order: with one
// audience go-oidc checks it before the times; with several the apiserver
// checks them itself, after.
func (v *Verifier) checkTimes(t *parsedToken, idt *gooidc.IDToken) error {
	single := len(v.jwt.Issuer.Audiences) == 1
	if single {
		if err := v.checkAudience(idt); err != nil {
			return err
		}
	}
	now := v.now()
	if idt.Expiry.Before(now) {
		return &ExpiredError{Expiry: idt.Expiry, Now: now}
	}
	nbf, ok, err := numericDate("nbf", t.nbf)
	if err != nil {
		return err
	}
	if ok && now.Add(v.cfg.NotBeforeLeeway).Before(nbf) {
		return &NotYetValidError{NotBefore: nbf, Now: now, Leeway: v.cfg.NotBeforeLeeway}
	}
	if !single {
		return v.checkAudience(idt)
	}
	return nil
}

func (v *Verifier) checkAudience(idt *gooidc.IDToken) error {
	for _, a := range idt.Audience {
		if slices.Contains(v.jwt.Issuer.Audiences, a) {
			return nil
		}
	}
	return &AudienceError{Want: v.jwt.Issuer.Audiences, Got: idt.Audience}
}

// Issuer returns the issuer URL the verifier trusts.
func (v *Verifier) Issuer() string { return v.jwt.Issuer.URL }

// Audiences returns the audiences the verifier accepts (any one suffices).
func (v *Verifier) Audiences() []string { return slices.Clone(v.jwt.Issuer.Audiences) }
