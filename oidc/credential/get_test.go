package credential_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cozystack/tenantkit/oidc/credential"
)

// fakeConfig is a Config for f with a private cache and a free port.
func fakeConfig(t *testing.T, f *fakeIssuer) credential.Config {
	return credential.Config{IssuerURL: f.srv.URL, ClientID: "tenant-a-kubernetes-prod", HTTPClient: f.srv.Client(),
		CacheDir: t.TempDir(), RedirectPorts: []int{freePort(t)}, Browser: f.browser(t), Prompt: io.Discard,
		Now: f.clock, SignInTimeout: 20 * time.Second}
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestGetLifecycle: sign-in, cache, refresh after expiry, a new sign-in
// when the refresh token is refused.
func TestGetLifecycle(t *testing.T) {
	f := newFakeIssuer(t)
	cfg := fakeConfig(t, f)
	ctx := context.Background()

	tok, err := credential.Get(ctx, cfg)
	require.NoError(t, err)
	require.Equal(t, credential.SourceSignIn, tok.Source)
	require.Equal(t, "alice", tok.Subject)

	again, err := credential.Get(ctx, cfg)
	require.NoError(t, err)
	require.Equal(t, credential.SourceCache, again.Source)
	require.Equal(t, tok.IDToken, again.IDToken)

	f.advance(2 * time.Hour)
	refreshed, err := credential.Get(ctx, cfg)
	require.NoError(t, err)
	require.Equal(t, credential.SourceRefresh, refreshed.Source)
	require.True(t, refreshed.Expiry.After(tok.Expiry))
	signIns, refreshes := f.counts()
	require.Equal(t, [2]int{1, 1}, [2]int{signIns, refreshes})

	f.mu.Lock()
	clear(f.refresh) // the issuer revoked every refresh token
	f.mu.Unlock()
	f.advance(2 * time.Hour)
	abandoned := cfg
	abandoned.Browser, abandoned.SignInTimeout = nil, 100*time.Millisecond
	_, err = credential.Get(ctx, abandoned)
	var re *credential.RefreshError
	require.ErrorAs(t, err, &re, "why a sign-in was needed")
	require.Equal(t, "invalid_grant", re.Code)
	require.ErrorIs(t, err, credential.ErrSignInTimeout, "why it failed")
	fresh, err := credential.Get(ctx, cfg)
	require.NoError(t, err)
	require.Equal(t, credential.SourceSignIn, fresh.Source)
	signIns, _ = f.counts()
	require.Equal(t, 2, signIns)
}

// TestGetRefusesBadTokens: what the issuer returns is verified.
func TestGetRefusesBadTokens(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*fakeIssuer)
		want error
	}{
		{"another audience", func(f *fakeIssuer) { f.audience = []string{"tenant-b-kubernetes-prod"} }, credential.ErrAudienceMismatch},
		{"wrong nonce", func(f *fakeIssuer) { n := "not-the-sign-in's"; f.nonce = &n }, credential.ErrTokenInvalid},
		{"issuer clock 2h behind", func(f *fakeIssuer) { f.now = f.now.Add(-2 * time.Hour) }, credential.ErrClockSkew},
		{"issuer clock 2h ahead", func(f *fakeIssuer) { f.now = f.now.Add(2 * time.Hour) }, credential.ErrClockSkew},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeIssuer(t)
			cfg := fakeConfig(t, f)
			now := f.now
			cfg.Now = func() time.Time { return now }
			tc.edit(f)
			_, err := credential.Get(context.Background(), cfg)
			require.ErrorIs(t, err, tc.want)
			var ae *credential.AudienceError
			if errors.As(err, &ae) {
				require.Equal(t, "tenant-a-kubernetes-prod", ae.Want)
			}
		})
	}
}

// TestGetTamperedCache: a cache file that was edited, truncated or
// written for another configuration is ignored and replaced.
func TestGetTamperedCache(t *testing.T) {
	f := newFakeIssuer(t)
	cfg := fakeConfig(t, f)
	ctx := context.Background()
	_, err := credential.Get(ctx, cfg)
	require.NoError(t, err)
	files, err := filepath.Glob(filepath.Join(cfg.CacheDir, "*.json"))
	require.NoError(t, err)
	require.Len(t, files, 1)
	fi, err := os.Stat(files[0])
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	di, err := os.Stat(cfg.CacheDir)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), di.Mode().Perm())

	good, err := os.ReadFile(files[0])
	require.NoError(t, err)
	for i, bad := range [][]byte{good[:len(good)/2], append(good[:len(good)-5:len(good)-5], []byte("xx\"}\n")...), []byte("garbage"), forge(t, good)} {
		require.NoError(t, os.WriteFile(files[0], bad, 0o600))
		tok, err := credential.Get(ctx, cfg)
		require.NoError(t, err)
		require.Equal(t, credential.SourceSignIn, tok.Source, "case %d", i)
		again, err := credential.Get(ctx, cfg)
		require.NoError(t, err)
		require.Equal(t, credential.SourceCache, again.Source, "replaced in case %d", i)
	}
}

// TestGetBackoff: after three sign-ins that never finish, the fourth is
// refused until the back-off ends; logout resets it.
func TestGetBackoff(t *testing.T) {
	f := newFakeIssuer(t)
	cfg := fakeConfig(t, f)
	cfg.Browser = nil // nobody signs in
	cfg.SignInTimeout = 100 * time.Millisecond
	ctx := context.Background()
	for range 3 { // Ctrl-C during a sign-in is no failed sign-in
		cctx, cancel := context.WithCancel(ctx)
		interrupted := cfg
		interrupted.Browser = func(string) error { cancel(); return nil }
		_, err := credential.Get(cctx, interrupted)
		require.ErrorIs(t, err, credential.ErrInterrupted)
		require.NotErrorIs(t, err, credential.ErrSignInTimeout)
	}
	for range 3 {
		_, err := credential.Get(ctx, cfg)
		require.ErrorIs(t, err, credential.ErrSignInTimeout)
		require.NotErrorIs(t, err, credential.ErrInterrupted)
	}
	_, err := credential.Get(ctx, cfg)
	var be *credential.BackoffError
	require.ErrorAs(t, err, &be)
	require.Equal(t, 3, be.Failures)
	require.Equal(t, f.clock().Add(30*time.Second).Unix(), be.RetryAfter.Unix())

	f.advance(31 * time.Second)
	_, err = credential.Get(ctx, cfg)
	require.ErrorIs(t, err, credential.ErrSignInTimeout, "the back-off is over: one more try")
	_, err = credential.Get(ctx, cfg)
	require.ErrorAs(t, err, &be)
	require.Equal(t, f.clock().Add(time.Minute).Unix(), be.RetryAfter.Unix(), "the back-off doubles")

	_, err = credential.Logout(ctx, cfg)
	require.NoError(t, err)
	cfg.Browser = f.browser(t)
	cfg.SignInTimeout = 20 * time.Second
	tok, err := credential.Get(ctx, cfg)
	require.NoError(t, err)
	require.Equal(t, credential.SourceSignIn, tok.Source)
}

// TestGetErrors: the typed errors of an unusable environment.
func TestGetErrors(t *testing.T) {
	f := newFakeIssuer(t)
	ctx := context.Background()

	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer busy.Close()
	cfg := fakeConfig(t, f)
	cfg.RedirectPorts = []int{busy.Addr().(*net.TCPAddr).Port}
	_, err = credential.Get(ctx, cfg)
	var pe *credential.PortError
	require.ErrorAs(t, err, &pe)
	require.ErrorIs(t, err, credential.ErrPortInUse)

	cfg.RedirectPorts = []int{busy.Addr().(*net.TCPAddr).Port, freePort(t)}
	_, err = credential.Get(ctx, cfg)
	require.NoError(t, err, "the second port is used when the first is taken")

	cfg = fakeConfig(t, f)
	cfg.IssuerURL = "https://127.0.0.1:" + strconv.Itoa(freePort(t))
	_, err = credential.Get(ctx, cfg)
	var ie *credential.IssuerError
	require.ErrorAs(t, err, &ie)
	require.ErrorIs(t, err, credential.ErrIssuerUnreachable)
	require.Equal(t, "discovery", ie.Op)

	_, err = credential.Get(ctx, credential.Config{IssuerURL: f.srv.URL})
	require.ErrorIs(t, err, credential.ErrInvalidConfig)

	cfg = fakeConfig(t, f)
	cctx, cancel := context.WithCancel(ctx)
	cfg.Browser = func(string) error { cancel(); return nil } // Ctrl-C instead of signing in
	_, err = credential.Get(cctx, cfg)
	require.ErrorIs(t, err, credential.ErrInterrupted)

	cfg = fakeConfig(t, f)
	cfg.NonInteractive = true
	cfg.Browser = func(string) error { t.Error("a non-interactive Get opened a browser"); return nil }
	_, err = credential.Get(ctx, cfg)
	require.ErrorIs(t, err, credential.ErrInteractionRequired, "nothing cached: no sign-in started")

	cfg = fakeConfig(t, f)
	cfg.SignInTimeout = -time.Second
	_, err = credential.Get(ctx, cfg)
	require.ErrorIs(t, err, credential.ErrInvalidConfig)
}

// TestGetIssuerAnswered: an issuer that answers discovery with an error
// status is told apart from one that does not answer.
func TestGetIssuerAnswered(t *testing.T) {
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	defer srv.Close()
	_, err := credential.Get(context.Background(), credential.Config{IssuerURL: srv.URL, ClientID: "c", HTTPClient: srv.Client(), CacheDir: t.TempDir()})
	var ie *credential.IssuerError
	require.ErrorAs(t, err, &ie)
	require.True(t, ie.Answered)
	require.ErrorIs(t, err, credential.ErrIssuerFailed)
	require.NotErrorIs(t, err, credential.ErrIssuerUnreachable)
	require.ErrorContains(t, err, "discovery: answered with an error: 404 Not Found")
}

// TestLogoutRevokes: logout revokes the refresh token where the issuer
// offers revocation, and removes the cache either way.
func TestLogoutRevokes(t *testing.T) {
	f := newFakeIssuer(t)
	cfg := fakeConfig(t, f)
	ctx := context.Background()
	_, err := credential.Get(ctx, cfg)
	require.NoError(t, err)
	res, err := credential.Logout(ctx, cfg)
	require.NoError(t, err)
	require.Equal(t, credential.LogoutResult{Removed: true, RefreshToken: true, Revoked: true, RevocationOffered: true}, res)
	require.Len(t, f.revoked, 1)
	require.Empty(t, f.refresh, "the issuer no longer knows the refresh token")

	tok, err := credential.Get(ctx, cfg)
	require.NoError(t, err)
	require.Equal(t, credential.SourceSignIn, tok.Source)

	f.noRevoke = true
	res, err = credential.Logout(ctx, cfg)
	require.NoError(t, err)
	require.Equal(t, credential.LogoutResult{Removed: true, RefreshToken: true}, res)
	res, err = credential.Logout(ctx, cfg)
	require.NoError(t, err)
	require.Equal(t, credential.LogoutResult{}, res, "nothing left to remove")
}

// TestGetDeviceCode: the device grant against the fake issuer.
func TestGetDeviceCode(t *testing.T) {
	f := newFakeIssuer(t)
	cfg := fakeConfig(t, f)
	cfg.Grant = credential.GrantDeviceCode
	var opened string
	cfg.Browser = func(u string) error { opened = u; return nil }
	tok, err := credential.Get(context.Background(), cfg)
	require.NoError(t, err)
	require.Equal(t, credential.SourceSignIn, tok.Source)
	require.Equal(t, f.srv.URL+"/verify", opened)
}

// forge rewrites a cache file the way an attacker with write access to
// it would: a well-formed entry, checksum and all, whose ID token carries
// a forged signature and a refresh token the issuer never issued. Get
// must trust neither.
func forge(t *testing.T, good []byte) []byte {
	_, body, _ := strings.Cut(string(good), "\n")
	var e map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &e))
	tok := e["id_token"].(string)
	e["id_token"] = tok[:strings.LastIndexByte(tok, '.')+1] + base64.RawURLEncoding.EncodeToString([]byte("forged signature"))
	e["refresh_token"] = "forged"
	forged, err := json.Marshal(e)
	require.NoError(t, err)
	sum := sha256.Sum256(forged)
	return []byte("tenantkit-oidc-credential v1 " + hex.EncodeToString(sum[:]) + "\n" + string(forged) + "\n")
}
