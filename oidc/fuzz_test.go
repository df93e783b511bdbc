package oidc_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cozystack/tenantkit/oidc"
	"github.com/cozystack/tenantkit/oidc/oidctest"
	"github.com/cozystack/tenantkit/ref"
	"github.com/cozystack/tenantkit/tenant"
)

// reasons are the typed rejections; every error Verify returns wraps one.
var reasons = []error{
	oidc.ErrMalformedToken, oidc.ErrTokenTooLarge, oidc.ErrUnsupportedAlgorithm, oidc.ErrIssuerMismatch,
	oidc.ErrUnknownKey, oidc.ErrInvalidSignature, oidc.ErrAudienceMismatch, oidc.ErrExpired, oidc.ErrNotYetValid,
	oidc.ErrEmailNotVerified, oidc.ErrClaim, oidc.ErrRuleFailed, oidc.ErrKeysUnavailable, oidc.ErrDistributedClaims,
	oidc.ErrCriticalHeader, oidc.ErrUnusableKey, oidc.ErrInvalidKeySet, oidc.ErrNotReady,
}

// FuzzVerify feeds arbitrary tokens to a Verifier with static keys: it must
// not panic, and every rejection must carry a typed reason.
func FuzzVerify(f *testing.F) {
	iss := oidctest.StartT(f, oidctest.Config{})
	for _, c := range oidctest.CorpusT(f, iss, oidctest.CorpusConfig{Cluster: acme}) {
		if len(c.Token) < 64<<10 {
			f.Add(c.Token)
		}
	}
	f.Add("a.b.c")
	f.Add("..")
	v, err := oidc.NewVerifier(context.Background(), oidc.VerifierConfig{
		JWT: oidc.JWTAuthenticator(acme, iss.URL(), iss.CAPEM()), Keys: iss.PublicKeys(), MaxTokenBytes: 64 << 10,
	})
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, token string) {
		user, err := v.Verify(context.Background(), token)
		if err == nil {
			require.NotNil(t, user)
			return
		}
		require.Nil(t, user)
		typed := false
		for _, r := range reasons {
			typed = typed || errors.Is(err, r)
		}
		require.True(t, typed, "untyped rejection: %v", err)
	})
}

// FuzzParseAuthenticationConfiguration feeds arbitrary files to the config
// loader: no panic, and whatever it accepts renders and loads again to the
// same configuration.
func FuzzParseAuthenticationConfiguration(f *testing.F) {
	auth, err := oidc.RenderAuthentication(oidc.AuthenticationSpec{Cluster: acme, OIDC: tenant.OIDC{Mode: tenant.OIDCSystem}, RootHost: "example.org"})
	require.NoError(f, err)
	f.Add(auth.YAML)
	f.Add([]byte(customWith("  claimValidationRules:\n  - claim: hd\n    requiredValue: example.org")))
	f.Add([]byte(customWith("  userValidationRules:\n  - expression: \"!user.username.startsWith('system:')\"\n    message: no")))
	f.Add([]byte("apiVersion: apiserver.config.k8s.io/v1beta1\nkind: AuthenticationConfiguration\n"))
	f.Add([]byte("{}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := oidc.ParseAuthenticationConfiguration(data)
		if err != nil {
			require.ErrorIs(t, err, oidc.ErrInvalidConfig)
			return
		}
		out, err := oidc.EncodeAuthenticationConfiguration(cfg, oidc.APIVersionV1)
		require.NoError(t, err)
		again, err := oidc.ParseAuthenticationConfiguration(out)
		require.NoError(t, err)
		require.Equal(t, cfg.JWT, again.JWT)
	})
}

// FuzzRenderAuthentication renders arbitrary specs: no panic, a typed
// error or a configuration the apiserver loads.
func FuzzRenderAuthentication(f *testing.F) {
	f.Add("tenant-acme", "prod", "System", "v1.35", "example.org", "", "", "--v=2")
	f.Add("tenant-acme", "prod", "System", "1.31", "", "https://idp.example.org/realms/x", "", "")
	f.Add("t", "p", "CustomConfig", "v1.34", "", "", customWith(""), "--oidc-client-id=x")
	f.Add("", "", "None", "", "", "", "", "")
	f.Fuzz(func(t *testing.T, ns, name, mode, version, rootHost, issuer, custom, arg string) {
		auth, err := oidc.RenderAuthentication(oidc.AuthenticationSpec{
			Cluster: ref.Cluster{Namespace: ns, Name: name}, KubernetesVersion: tenant.Version(version),
			OIDC:     tenant.OIDC{Mode: tenant.OIDCMode(mode), CustomConfig: tenant.CustomConfig{Config: custom}},
			RootHost: rootHost, IssuerURL: issuer, APIServer: tenant.APIServer{ExtraArgs: []string{arg}},
		})
		if err != nil {
			return
		}
		if auth.YAML != nil {
			_, err := oidc.ParseAuthenticationConfiguration(auth.YAML)
			require.NoError(t, err)
		}
	})
}
