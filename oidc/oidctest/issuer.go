package oidctest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/cozystack/tenantkit/oidc"
)

// Key is a signing key of the issuer.
type Key struct {
	// ID is the kid published in the JWKS and set in token headers.
	ID string
	// Algorithm is the JWS algorithm, for example oidc.RS256.
	Algorithm oidc.Algorithm
	// Private is the private key.
	Private crypto.Signer
}

// jwk returns the key's public JWK, as the JWKS publishes it.
func (k Key) jwk() jose.JSONWebKey {
	return jose.JSONWebKey{Key: k.Private.Public(), KeyID: k.ID, Algorithm: string(k.Algorithm), Use: "sig"}
}

// GenerateKey generates a key for alg (RS256/384/512 and PS256/384/512:
// RSA 2048; ES256/384/512: the matching curve) with a fresh key ID.
func GenerateKey(alg oidc.Algorithm) (Key, error) {
	var priv crypto.Signer
	var err error
	switch alg {
	case oidc.RS256, oidc.RS384, oidc.RS512, oidc.PS256, oidc.PS384, oidc.PS512:
		priv, err = rsa.GenerateKey(rand.Reader, 2048)
	case oidc.ES256:
		priv, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case oidc.ES384:
		priv, err = ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	case oidc.ES512:
		priv, err = ecdsa.GenerateKey(elliptic.P521(), rand.Reader)
	default:
		return Key{}, fmt.Errorf("oidctest: no key type for algorithm %q", alg)
	}
	if err != nil {
		return Key{}, fmt.Errorf("oidctest: generate key: %w", err)
	}
	return Key{ID: fmt.Sprintf("%s-%d", alg, keySeq.Add(1)), Algorithm: alg, Private: priv}, nil
}

// GenerateKeyT is GenerateKey for tests: it fails the test on error.
func GenerateKeyT(t testing.TB, alg oidc.Algorithm) Key {
	t.Helper()
	k, err := GenerateKey(alg)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

var keySeq atomic.Int64

// Config configures an Issuer. The zero value serves one RS256 key at the
// server's root URL.
type Config struct {
	// Algorithm of the first signing key. Default RS256.
	Algorithm oidc.Algorithm
	// Path is appended to the server URL to form the issuer URL, for
	// example "/realms/cozy". Default: none.
	Path string
	// CacheControl is sent with the JWKS. Default "max-age=600" (dex's).
	CacheControl string
}

// Issuer is an OpenID provider in memory, served over HTTPS on loopback:
// a discovery document and a JWKS, plus token signing. Tests use it to
// mint any token they need, valid or not.
type Issuer struct {
	srv  *httptest.Server
	url  string
	path string

	mu         sync.Mutex
	keys       []Key // keys[0] signs
	published  []Key // published, never used to sign
	edit       func([]json.RawMessage) []json.RawMessage
	cc         string
	down       bool
	fetches    atomic.Int64
	discovered atomic.Int64
}

// Start starts an issuer; Close stops it. Tests use StartT.
func Start(cfg Config) (*Issuer, error) {
	if cfg.Algorithm == "" {
		cfg.Algorithm = oidc.RS256
	}
	if cfg.CacheControl == "" {
		cfg.CacheControl = "max-age=600"
	}
	key, err := GenerateKey(cfg.Algorithm)
	if err != nil {
		return nil, err
	}
	iss := &Issuer{keys: []Key{key}, cc: cfg.CacheControl, path: cfg.Path}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+cfg.Path+"/.well-known/openid-configuration", iss.discovery)
	mux.HandleFunc("GET "+cfg.Path+"/keys", iss.jwks)
	iss.srv = httptest.NewTLSServer(mux)
	iss.url = iss.srv.URL + cfg.Path
	return iss, nil
}

// StartT is Start for tests: it fails the test on error, and the issuer
// stops when the test ends.
func StartT(t testing.TB, cfg Config) *Issuer {
	t.Helper()
	iss, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(iss.Close)
	return iss
}

// Close stops the issuer's server.
func (iss *Issuer) Close() { iss.srv.Close() }

// URL returns the issuer URL (the iss of its tokens).
func (iss *Issuer) URL() string { return iss.url }

// CAPEM returns the PEM certificate the issuer's TLS server presents; put it
// in issuer.certificateAuthority.
func (iss *Issuer) CAPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: iss.srv.Certificate().Raw})
}

// Client returns an HTTP client that trusts the issuer.
func (iss *Issuer) Client() *http.Client { return iss.srv.Client() }

// Key returns the current signing key.
func (iss *Issuer) Key() Key {
	iss.mu.Lock()
	defer iss.mu.Unlock()
	return iss.keys[0]
}

// RotateKey adds a new key of the same algorithm and signs with it from now
// on; the old key stays published until RemoveKey.
func (iss *Issuer) RotateKey() (Key, error) {
	k, err := GenerateKey(iss.Key().Algorithm)
	if err != nil {
		return Key{}, err
	}
	iss.addKey(k)
	return k, nil
}

// RotateKeyT is RotateKey for tests: it fails the test on error.
func (iss *Issuer) RotateKeyT(t testing.TB) Key {
	t.Helper()
	k, err := iss.RotateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// addKey publishes k and makes it the signing key.
func (iss *Issuer) addKey(k Key) {
	iss.mu.Lock()
	defer iss.mu.Unlock()
	iss.keys = append([]Key{k}, iss.keys...)
}

// PublishKey publishes k in the JWKS without signing with it (a key a
// test signs with itself, SignT).
func (iss *Issuer) PublishKey(k Key) {
	iss.mu.Lock()
	defer iss.mu.Unlock()
	iss.published = append(iss.published, k)
}

// SetKeysJSON makes the issuer serve edit(keys) as the JWKS "keys": the
// published keys, one JSON object each, in order. Tests use it to serve
// what real providers get wrong (an unknown kty, a lower-case alg, an
// x5u, a duplicate kid ...); nil restores the plain JWKS.
func (iss *Issuer) SetKeysJSON(edit func(keys []json.RawMessage) []json.RawMessage) {
	iss.mu.Lock()
	defer iss.mu.Unlock()
	iss.edit = edit
}

// RemoveKey stops publishing the key with the given ID.
func (iss *Issuer) RemoveKey(id string) {
	iss.mu.Lock()
	defer iss.mu.Unlock()
	for i, k := range iss.keys {
		if k.ID == id && len(iss.keys) > 1 {
			iss.keys = append(iss.keys[:i:i], iss.keys[i+1:]...)
			return
		}
	}
	for i, k := range iss.published {
		if k.ID == id {
			iss.published = append(iss.published[:i:i], iss.published[i+1:]...)
			return
		}
	}
}

// SetDown makes discovery and JWKS answer 503 (down) or serve again.
func (iss *Issuer) SetDown(down bool) {
	iss.mu.Lock()
	defer iss.mu.Unlock()
	iss.down = down
}

// JWKSFetches counts the JWKS requests served so far (failed ones too).
func (iss *Issuer) JWKSFetches() int { return int(iss.fetches.Load()) }

// DiscoveryFetches counts the discovery requests served so far (failed
// ones too).
func (iss *Issuer) DiscoveryFetches() int { return int(iss.discovered.Load()) }

// PublicKeys returns the published public keys, as a Verifier without an
// issuer takes them (oidc.VerifierConfig.Keys).
func (iss *Issuer) PublicKeys() []oidc.PublicKey {
	var out []oidc.PublicKey
	for _, k := range iss.publishedJWKs() {
		out = append(out, oidc.PublicKey{ID: k.KeyID, Key: k.Key})
	}
	return out
}

// publishedJWKs returns the published keys as JWKs.
func (iss *Issuer) publishedJWKs() []jose.JSONWebKey {
	iss.mu.Lock()
	defer iss.mu.Unlock()
	var set []jose.JSONWebKey
	for _, k := range iss.keys {
		set = append(set, k.jwk())
	}
	for _, k := range iss.published {
		set = append(set, k.jwk())
	}
	return set
}

func (iss *Issuer) isDown() bool {
	iss.mu.Lock()
	defer iss.mu.Unlock()
	return iss.down
}

func (iss *Issuer) discovery(w http.ResponseWriter, _ *http.Request) {
	iss.discovered.Add(1)
	if iss.isDown() {
		http.Error(w, "issuer down", http.StatusServiceUnavailable)
		return
	}
	writeJSON(w, map[string]any{
		"issuer":                                iss.url,
		"jwks_uri":                              iss.url + "/keys",
		"authorization_endpoint":                iss.url + "/auth",
		"token_endpoint":                        iss.url + "/token",
		"response_types_supported":              []string{"code"},
		"subject_types_supported":               []string{"public"},
		"id_token_signing_alg_values_supported": []string{"RS256", "RS384", "RS512", "ES256", "ES384", "ES512", "PS256", "PS384", "PS512"},
		"code_challenge_methods_supported":      []string{"S256"},
	})
}

func (iss *Issuer) jwks(w http.ResponseWriter, _ *http.Request) {
	iss.fetches.Add(1)
	if iss.isDown() {
		http.Error(w, "issuer down", http.StatusServiceUnavailable)
		return
	}
	iss.mu.Lock()
	cc, edit := iss.cc, iss.edit
	iss.mu.Unlock()
	if cc != "-" {
		w.Header().Set("Cache-Control", cc)
	}
	set := iss.publishedJWKs()
	keys := make([]json.RawMessage, 0, len(set))
	for _, k := range set {
		raw, err := k.MarshalJSON()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		keys = append(keys, raw)
	}
	if edit != nil {
		keys = edit(keys)
	}
	writeJSON(w, map[string]any{"keys": keys})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// Claims returns the claims of a valid ID token for audience: iss, aud,
// sub, email (verified), groups, iat and exp one hour from now. Change the
// map to build the token a test needs.
func (iss *Issuer) Claims(audience string, email string, groups ...string) map[string]any {
	now := time.Now()
	c := map[string]any{
		"iss":            iss.url,
		"aud":            audience,
		"sub":            "sub-" + email,
		"email":          email,
		"email_verified": true,
		"iat":            now.Unix(),
		"exp":            now.Add(time.Hour).Unix(),
	}
	if groups != nil {
		c["groups"] = groups
	}
	return c
}
