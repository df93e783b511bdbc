package credential_test

import (
	"context"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cozystack/tenantkit/localenv"
	"github.com/cozystack/tenantkit/oidc/credential"
)

const (
	dexClient   = "tenant-a-kubernetes-prod"
	dexEmail    = "alice@a.example"
	dexPassword = "correct horse battery staple"
)

// TestDex signs in at a real dex (password connector, its own HTML login
// pages driven headlessly) with both grants, and checks the token's
// lifecycle: cache, refresh after real expiry without a sign-in, logout
// (dex offers no revocation endpoint) and a new sign-in.
func TestDex(t *testing.T) {
	env := localenv.StartT(t, localenv.Config{SkipAPIServer: true})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	const ttl = 15 * time.Second
	dex, err := env.StartDex(ctx, localenv.DexConfig{Clients: []string{dexClient}, IDTokenTTL: ttl,
		Users: []localenv.DexUser{{Email: dexEmail, Password: dexPassword, Groups: []string{"tenant-a-admin"}}}})
	require.NoError(t, err)

	for _, grant := range []credential.Grant{credential.GrantAuthCode, credential.GrantDeviceCode} {
		t.Run(string(grant), func(t *testing.T) {
			var opened atomic.Int32
			cfg := credential.Config{IssuerURL: dex.IssuerURL, ClientID: dexClient, Grant: grant,
				Scopes: []string{"email", "groups", "offline_access"}, CertificateAuthority: dex.CAPEM,
				CacheDir: t.TempDir(), RedirectPorts: []int{freePort(t)}, Prompt: io.Discard,
				Browser: func(url string) error {
					opened.Add(1)
					go func() {
						if err := dex.SignIn(ctx, url, dexEmail, dexPassword); err != nil {
							t.Errorf("headless sign-in: %v", err)
						}
					}()
					return nil
				}}
			tok, err := credential.Get(ctx, cfg)
			require.NoError(t, err)
			require.Equal(t, credential.SourceSignIn, tok.Source)
			require.EqualValues(t, 1, opened.Load())

			again, err := credential.Get(ctx, cfg)
			require.NoError(t, err)
			require.Equal(t, credential.SourceCache, again.Source)

			time.Sleep(time.Until(tok.Expiry) + time.Second)
			refreshed, err := credential.Get(ctx, cfg)
			require.NoError(t, err)
			require.Equal(t, credential.SourceRefresh, refreshed.Source, "expired: refreshed, no sign-in")
			require.True(t, refreshed.Expiry.After(tok.Expiry))
			require.EqualValues(t, 1, opened.Load())

			res, err := credential.Logout(ctx, cfg)
			require.NoError(t, err)
			require.Equal(t, credential.LogoutResult{Removed: true, RefreshToken: true}, res, "dex advertises no revocation_endpoint")
			tok, err = credential.Get(ctx, cfg)
			require.NoError(t, err)
			require.Equal(t, credential.SourceSignIn, tok.Source)
			require.EqualValues(t, 2, opened.Load())
		})
	}

}
