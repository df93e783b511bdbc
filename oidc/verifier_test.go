package oidc_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apiserver/pkg/apis/apiserver"

	"github.com/cozystack/tenantkit/oidc"
	"github.com/cozystack/tenantkit/oidc/oidctest"
	"github.com/cozystack/tenantkit/ref"
)

var acme = ref.Cluster{Namespace: "tenant-acme", Name: "prod"}

func newVerifier(t *testing.T, jwt apiserver.JWTAuthenticator, mod ...func(*oidc.VerifierConfig)) *oidc.Verifier {
	t.Helper()
	cfg := oidc.VerifierConfig{JWT: jwt}
	for _, m := range mod {
		m(&cfg)
	}
	v, err := oidc.NewVerifier(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, v.Close()) })
	return v
}

func TestVerifierCorpus(t *testing.T) {
	iss := oidctest.StartT(t, oidctest.Config{})
	cases := oidctest.CorpusT(t, iss, oidctest.CorpusConfig{Cluster: acme})
	require.GreaterOrEqual(t, len(cases), 36)
	v := newVerifier(t, oidc.JWTAuthenticator(acme, iss.URL(), iss.CAPEM()))
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			user, err := v.Verify(context.Background(), tc.Token)
			if tc.Want == nil {
				require.NoError(t, err)
				require.Equal(t, "alice@example.org", user.Username)
				return
			}
			require.Error(t, err)
			require.Nil(t, user)
			require.ErrorIs(t, err, tc.Want, "got %v", err)
			require.Less(t, len(err.Error()), 400, "errors stay short and never echo the token")
		})
	}
}

func TestVerifyMapsUser(t *testing.T) {
	iss := oidctest.StartT(t, oidctest.Config{Algorithm: "ES256"})
	v := newVerifier(t, oidc.JWTAuthenticator(acme, iss.URL(), iss.CAPEM()))
	claims := iss.Claims(acme.ClientID(), "bob@example.org", "tenant-acme-view", "devs")
	claims["jti"] = "abc"
	user, err := v.Verify(context.Background(), oidctest.SignT(t, iss.Key(), claims))
	require.NoError(t, err)
	require.Equal(t, &oidc.UserInfo{
		Username: "bob@example.org",
		Groups:   []string{"tenant-acme-view", "devs"},
		Extra:    map[string][]string{"authentication.kubernetes.io/credential-id": {"JTI=abc"}},
	}, user)
}

func TestVerifyExplainsRejections(t *testing.T) {
	iss := oidctest.StartT(t, oidctest.Config{})
	other := ref.Cluster{Namespace: "tenant-acme", Name: "stage"}
	v := newVerifier(t, oidc.JWTAuthenticator(acme, iss.URL(), iss.CAPEM()))
	ctx := context.Background()

	_, err := v.Verify(ctx, oidctest.SignT(t, iss.Key(), iss.Claims(other.ClientID(), "a@b.c", "tenant-acme-admin")))
	var aud *oidc.AudienceError
	require.ErrorAs(t, err, &aud)
	require.Equal(t, []string{"tenant-acme-kubernetes-prod"}, aud.Want)
	require.Equal(t, []string{"tenant-acme-kubernetes-stage"}, aud.Got)

	c := iss.Claims(acme.ClientID(), "a@b.c", "tenant-acme-admin")
	exp := time.Now().Add(-time.Hour).Truncate(time.Second)
	c["exp"] = exp.Unix()
	_, err = v.Verify(ctx, oidctest.SignT(t, iss.Key(), c))
	var expired *oidc.ExpiredError
	require.ErrorAs(t, err, &expired)
	require.True(t, expired.Expiry.Equal(exp))

	_, err = v.Verify(ctx, oidctest.SignT(t, iss.Key(), iss.Claims(acme.ClientID(), "a@b.c", "devs")))
	var rule *oidc.RuleError
	require.ErrorAs(t, err, &rule)
	require.Equal(t, oidc.TenantGroupsGate(acme), rule.Expression)
	require.Contains(t, rule.Message, "tenant-acme-{view,use,admin,super-admin}")

	c = iss.Claims(acme.ClientID(), "a@b.c", "tenant-acme-admin")
	c["iss"] = iss.URL() + "/"
	_, err = v.Verify(ctx, oidctest.SignT(t, iss.Key(), c))
	var mismatch *oidc.IssuerMismatchError
	require.ErrorAs(t, err, &mismatch)
	require.Equal(t, iss.URL()+"/", mismatch.Got)

	_, err = v.Verify(ctx, oidctest.SignT(t, oidctest.GenerateKeyT(t, "RS256"), iss.Claims(acme.ClientID(), "a@b.c", "tenant-acme-admin")))
	var unknown *oidc.UnknownKeyError
	require.ErrorAs(t, err, &unknown)
	require.NotEmpty(t, unknown.KeyID)
	require.False(t, errors.Is(err, oidc.ErrInvalidSignature))
}

func TestVerifierCloseNil(t *testing.T) {
	var v *oidc.Verifier
	require.NoError(t, v.Close(), "Close on the nil verifier NewVerifier returns with an error")
}

// Close on a nil *Verifier, as a deferred Close after a failed NewVerifier
// would call it, does nothing.
func TestVerifier_CloseNil(t *testing.T) {
	var v *oidc.Verifier
	require.NotPanics(t, func() { require.NoError(t, v.Close()) })
}
