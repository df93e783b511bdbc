package credential_test

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/stretchr/testify/require"
)

// fakeIssuer is an OpenID provider for the edge cases a real one cannot
// be made to produce (a token for another audience, a skewed clock, a
// wrong nonce, revocation): discovery, JWKS, an authorization endpoint
// that redirects at once, a token endpoint (code with PKCE, refresh,
// device code) and a revocation endpoint. The integration tests use dex.
type fakeIssuer struct {
	srv *httptest.Server
	key *rsa.PrivateKey

	mu        sync.Mutex
	now       time.Time
	audience  []string // nil: the client ID
	nonce     *string  // nil: the authorization request's
	ttl       time.Duration
	pending   map[string]url.Values // code → authorization request
	refresh   map[string]bool       // valid refresh tokens
	signIns   int
	refreshes int
	revoked   []string
	noRevoke  bool
	seq       int
}

func newFakeIssuer(t *testing.T) *fakeIssuer {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	f := &fakeIssuer{key: key, now: time.Now(), ttl: time.Hour, pending: map[string]url.Values{}, refresh: map[string]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", f.discovery)
	mux.HandleFunc("/keys", f.keys)
	mux.HandleFunc("/auth", f.auth)
	mux.HandleFunc("/token", f.token)
	mux.HandleFunc("/revoke", f.revoke)
	mux.HandleFunc("/device", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, 200, map[string]any{"device_code": "dc", "user_code": "ABCD-EFGH", "verification_uri": f.srv.URL + "/verify", "interval": 1, "expires_in": 60})
	})
	f.srv = httptest.NewTLSServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeIssuer) clock() time.Time { f.mu.Lock(); defer f.mu.Unlock(); return f.now }

func (f *fakeIssuer) advance(d time.Duration) { f.mu.Lock(); f.now = f.now.Add(d); f.mu.Unlock() }

func (f *fakeIssuer) counts() (signIns, refreshes int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.signIns, f.refreshes
}

func (f *fakeIssuer) discovery(w http.ResponseWriter, _ *http.Request) {
	d := map[string]any{"issuer": f.srv.URL, "authorization_endpoint": f.srv.URL + "/auth", "token_endpoint": f.srv.URL + "/token",
		"jwks_uri": f.srv.URL + "/keys", "device_authorization_endpoint": f.srv.URL + "/device",
		"id_token_signing_alg_values_supported": []string{"RS256"}}
	f.mu.Lock()
	if !f.noRevoke {
		d["revocation_endpoint"] = f.srv.URL + "/revoke"
	}
	f.mu.Unlock()
	writeJSON(w, 200, d)
}

func (f *fakeIssuer) keys(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, 200, jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &f.key.PublicKey, KeyID: "k1", Algorithm: "RS256", Use: "sig"}}})
}

// auth answers the authorization request at once with a code: the user
// is always signed in.
func (f *fakeIssuer) auth(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f.mu.Lock()
	f.seq++
	code := fmt.Sprintf("code-%d", f.seq)
	f.pending[code] = q
	f.mu.Unlock()
	http.Redirect(w, r, q.Get("redirect_uri")+"?code="+code+"&state="+url.QueryEscape(q.Get("state")), http.StatusFound)
}

func (f *fakeIssuer) token(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	f.mu.Lock()
	defer f.mu.Unlock()
	switch r.Form.Get("grant_type") {
	case "authorization_code":
		req, ok := f.pending[r.Form.Get("code")]
		delete(f.pending, r.Form.Get("code"))
		sum := sha256.Sum256([]byte(r.Form.Get("code_verifier")))
		if !ok || req.Get("code_challenge_method") != "S256" || base64.RawURLEncoding.EncodeToString(sum[:]) != req.Get("code_challenge") {
			writeJSON(w, 400, map[string]string{"error": "invalid_grant", "error_description": "bad code or PKCE verifier"})
			return
		}
		f.signIns++
		f.issue(w, req.Get("client_id"), req.Get("nonce"))
	case "urn:ietf:params:oauth:grant-type:device_code":
		f.signIns++
		f.issue(w, r.Form.Get("client_id"), "")
	case "refresh_token":
		if !f.refresh[r.Form.Get("refresh_token")] {
			writeJSON(w, 400, map[string]string{"error": "invalid_grant", "error_description": "refresh token expired or revoked"})
			return
		}
		delete(f.refresh, r.Form.Get("refresh_token"))
		f.refreshes++
		f.issue(w, r.Form.Get("client_id"), "")
	default:
		writeJSON(w, 400, map[string]string{"error": "unsupported_grant_type"})
	}
}

// issue answers a token request; f.mu is held.
func (f *fakeIssuer) issue(w http.ResponseWriter, clientID, nonce string) {
	aud := f.audience
	if aud == nil {
		aud = []string{clientID}
	}
	if f.nonce != nil {
		nonce = *f.nonce
	}
	claims := map[string]any{"iss": f.srv.URL, "sub": "alice", "aud": aud, "iat": f.now.Unix(), "exp": f.now.Add(f.ttl).Unix(), "email": "alice@example.org"}
	if nonce != "" {
		claims["nonce"] = nonce
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: f.key}, (&jose.SignerOptions{}).WithHeader("kid", "k1"))
	if err != nil {
		panic(err)
	}
	payload, _ := json.Marshal(claims)
	jws, err := signer.Sign(payload)
	if err != nil {
		panic(err)
	}
	raw, _ := jws.CompactSerialize()
	f.seq++
	rt := fmt.Sprintf("refresh-%d", f.seq)
	f.refresh[rt] = true
	writeJSON(w, 200, map[string]any{"access_token": "at", "token_type": "Bearer", "expires_in": int(f.ttl.Seconds()), "id_token": raw, "refresh_token": rt})
}

func (f *fakeIssuer) revoke(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.revoked = append(f.revoked, r.Form.Get("token"))
	delete(f.refresh, r.Form.Get("token"))
	w.WriteHeader(200)
}

// browser follows the authorization URL like a browser that is already
// signed in: the issuer redirects at once to the loopback redirect URI.
func (f *fakeIssuer) browser(t *testing.T) func(string) error {
	return func(u string) error {
		go func() {
			resp, err := f.srv.Client().Get(u)
			if err != nil {
				t.Logf("browser: %v", err)
				return
			}
			resp.Body.Close()
		}()
		return nil
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
