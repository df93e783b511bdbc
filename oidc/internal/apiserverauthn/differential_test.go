package apiserverauthn_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/authentication/authenticator"

	"github.com/cozystack/tenantkit/oidc"
	"github.com/cozystack/tenantkit/oidc/oidctest"
	"github.com/cozystack/tenantkit/ref"
)

var (
	acme  = ref.Cluster{Namespace: "tenant-acme", Name: "prod"}
	other = ref.Cluster{Namespace: "tenant-acme", Name: "stage"}
)

func ptr(s string) *string { return &s }

// configs are the JWT authenticator entries both implementations run: the
// one Cozystack renders, and others that exercise every mapping and rule
// kind the apiserver has.
func configs(iss *oidctest.Issuer) map[string]apiserver.JWTAuthenticator {
	ca := string(iss.CAPEM())
	return map[string]apiserver.JWTAuthenticator{
		"cozystack-system": oidc.JWTAuthenticator(acme, iss.URL(), iss.CAPEM()),
		"cel": {
			Issuer: apiserver.Issuer{URL: iss.URL(), CertificateAuthority: ca,
				Audiences: []string{acme.ClientID(), "kubectl"}, AudienceMatchPolicy: apiserver.AudienceMatchPolicyMatchAny},
			ClaimValidationRules: []apiserver.ClaimValidationRule{
				{Claim: "hd", RequiredValue: "example.org"},
				{Expression: `!has(claims.blocked) || claims.blocked != true`, Message: "account blocked"},
			},
			ClaimMappings: apiserver.ClaimMappings{
				Username: apiserver.PrefixedClaimOrExpression{
					Expression: `claims.?email_verified.orValue(true) == true ? claims.email : "unverified:" + claims.sub`},
				Groups: apiserver.PrefixedClaimOrExpression{Expression: `claims.?roles.orValue([])`},
				UID:    apiserver.ClaimOrExpression{Claim: "sub"},
				Extra: []apiserver.ExtraMapping{
					{Key: "example.org/tenant", ValueExpression: `claims.?tenant.orValue("")`},
					{Key: "example.org/org-groups", ValueExpression: `claims.?org__dot__groups.orValue([])`},
				},
			},
			UserValidationRules: []apiserver.UserValidationRule{
				{Expression: `!user.username.startsWith("system:")`, Message: "no system users"},
				{Expression: `user.groups.all(g, !g.startsWith("system:"))`, Message: "no system groups"},
			},
		},
		"prefixed": {
			Issuer: apiserver.Issuer{URL: iss.URL(), CertificateAuthority: ca, Audiences: []string{"kubectl"}},
			ClaimMappings: apiserver.ClaimMappings{
				Username: apiserver.PrefixedClaimOrExpression{Claim: "sub", Prefix: ptr(iss.URL() + "#")},
				Groups:   apiserver.PrefixedClaimOrExpression{Claim: "groups", Prefix: ptr("oidc:")},
				UID:      apiserver.ClaimOrExpression{Expression: `claims.?sub.orValue("none")`},
			},
		},
		"email-claim-no-groups": {
			Issuer: apiserver.Issuer{URL: iss.URL(), CertificateAuthority: ca, Audiences: []string{acme.ClientID()}},
			ClaimMappings: apiserver.ClaimMappings{
				Username: apiserver.PrefixedClaimOrExpression{Claim: "email", Prefix: ptr("")},
			},
		},
	}
}

// variants are the values a generated token's claims take; absent is a
// marker for "leave the claim out".
type absentT struct{}

var absent = absentT{}

func variants(iss *oidctest.Issuer, now time.Time) map[string][]any {
	h := func(d time.Duration) int64 { return now.Add(d).Unix() }
	return map[string][]any{
		"iss":            {iss.URL(), iss.URL(), iss.URL(), iss.URL(), iss.URL() + "/", "https://evil.example.org", absent},
		"aud":            {[]string{acme.ClientID(), "kubectl"}, acme.ClientID(), "kubectl", other.ClientID(), []string{other.ClientID()}, []string{}, absent, 7},
		"exp":            {h(time.Hour), h(time.Hour), h(time.Hour), float64(h(time.Hour)) + 0.5, h(-time.Hour), absent, "soon"},
		"nbf":            {absent, absent, h(-time.Hour), h(20 * time.Second), h(10 * time.Minute), "x"},
		"iat":            {h(0), absent, "x"},
		"sub":            {"user-1", "system:admin", absent, 5, ""},
		"email":          {"alice@example.org", "bob@example.org", "", absent, 3, nil},
		"email_verified": {true, true, absent, false, nil, "true"},
		"groups":         {[]string{"tenant-acme-admin"}, []string{"tenant-acme-view", "devs"}, "tenant-acme-view", []string{}, nil, absent, []int{1}, []string{"system:masters", "tenant-acme-admin"}, []string{"", "tenant-acme-use"}},
		"jti":            {absent, "j-1", 3, ""},
		"hd":             {"example.org", "example.org", "example.com", absent, 1},
		"blocked":        {absent, absent, true, false},
		"roles":          {absent, []string{"a", "b"}, "a", []int{1}, []string{"system:x"}},
		"tenant":         {absent, "acme", []string{"a", ""}, 7},
		"org.groups":     {absent, []string{"g1"}, "g2"},
		// encoding/json matches struct fields case-insensitively: go-oidc's
		// iss/aud/exp/nbf see these, the claims map does not.
		"ISS":   {absent, "https://evil.example.org", iss.URL()},
		"NBF":   {absent, h(10 * time.Minute), h(-time.Hour)},
		"Exp":   {absent, h(-time.Hour), h(time.Hour)},
		"AUD":   {absent, other.ClientID(), acme.ClientID()},
		"Email": {absent, "mallory@example.org"},
		"ı":     {absent, 1},
	}
}

// generate signs n tokens: each starts from claims every config accepts
// (the first variant of each claim) and has each claim replaced by a
// random variant with probability 1/8, so that most tokens differ from a
// valid one in a claim or two.
func generate(t testing.TB, iss *oidctest.Issuer, n int) []oidctest.Case {
	rng := rand.New(rand.NewPCG(1, 2))
	vars := variants(iss, time.Now())
	names := make([]string, 0, len(vars))
	for k := range vars {
		names = append(names, k)
	}
	out := make([]oidctest.Case, 0, n)
	for i := range n {
		claims := map[string]any{}

		for _, name := range names {
			vs := vars[name]
			v := vs[0]
			if rng.IntN(8) == 0 {
				v = vs[rng.IntN(len(vs))]
			}
			if v == absent {
				continue
			}
			claims[name] = v

		}
		out = append(out, oidctest.Case{Name: fmt.Sprintf("generated %d", i), Token: oidctest.SignT(t, iss.Key(), claims)})
	}
	return out
}

// headerVariants are valid claims under unusual JOSE headers: both
// implementations must agree on them too.
func headerVariants(t testing.TB, iss *oidctest.Issuer) []oidctest.Case {
	payload, err := json.Marshal(iss.Claims(acme.ClientID(), "alice@example.org", "tenant-acme-admin"))
	require.NoError(t, err)
	var out []oidctest.Case
	for name, h := range map[string]map[string]any{
		"crit exp":        {"crit": []string{"exp"}, "exp": 1},
		"crit b64":        {"crit": []string{"b64"}, "b64": true},
		"jku":             {"jku": "https://evil.example.org/keys"},
		"x5u":             {"x5u": "https://evil.example.org/cert"},
		"cty JWT":         {"cty": "JWT"},
		"zip DEF":         {"zip": "DEF"},
		"unknown header":  {"tenantkit": "x"},
		"typ at+jwt":      {"typ": "at+jwt"},
		"jwk embedded":    {"jwk": map[string]any{"kty": "oct", "k": "AAAA"}},
		"crit empty list": {"crit": []string{}},
	} {
		tok, err := iss.Key().SignWithHeaders(h, payload)
		require.NoError(t, err, name)
		out = append(out, oidctest.Case{Name: "header " + name, Token: tok})
	}
	return out
}

func TestDifferential(t *testing.T) {
	for _, alg := range []string{"RS256", "ES256"} {
		t.Run(alg, func(t *testing.T) {
			iss := oidctest.StartT(t, oidctest.Config{Algorithm: joseAlg(alg)})
			corpus := oidctest.CorpusT(t, iss, oidctest.CorpusConfig{Cluster: acme, Other: other})
			tokens := append(corpus, generate(t, iss, 300)...)
			tokens = append(tokens, headerVariants(t, iss)...)
			for name, jwt := range configs(iss) {
				t.Run(name, func(t *testing.T) {
					compare(t, newAPIServerAuthenticator(t, iss, jwt), newVerifier(t, iss, jwt), tokens)
				})
			}
		})
	}
}

// compare requires both implementations to accept exactly the same tokens
// and to map them to the same user, and logs how many agree.
func compare(t *testing.T, theirs authenticator.Token, ours *oidc.Verifier, tokens []oidctest.Case) {
	t.Helper()
	var tl tally
	for _, tc := range tokens {
		tl.add(t, theirs, ours, tc)
	}
	tl.report(t)
}

// tally counts the tokens on which the apiserver and the Verifier agree:
// the same decision and, for accepted tokens, the same user.
type tally struct {
	tokens, agree, accepted int
	diffs                   []string
	reasons                 []string // same decision, but our reason contradicts the apiserver's message
}

func (tl *tally) add(t *testing.T, theirs authenticator.Token, ours *oidc.Verifier, tc oidctest.Case) {
	t.Helper()
	ctx := context.Background()
	resp, ok, theirErr := theirs.AuthenticateToken(ctx, tc.Token)
	user, ourErr := ours.Verify(ctx, tc.Token)
	if len(tc.Token) > oidc.DefaultMaxTokenBytes {
		// Larger than any request header kube-apiserver reads (1 MiB): it
		// never reaches the authenticator over HTTP. We refuse it upfront.
		require.ErrorIs(t, ourErr, oidc.ErrTokenTooLarge)
		return
	}
	tl.tokens++
	theyAccept := ok && theirErr == nil
	if theyAccept != (ourErr == nil) {
		tl.diffs = append(tl.diffs, fmt.Sprintf("%s: apiserver ok=%v err=%v; ours err=%v", tc.Name, ok, theirErr, ourErr))
		return
	}
	if !theyAccept {
		tl.agree++
		if !sameReason(theirErr, ourErr) {
			tl.reasons = append(tl.reasons, fmt.Sprintf("%s: apiserver err=%v; ours err=%v", tc.Name, theirErr, ourErr))
		}
		return
	}
	got := fmt.Sprintf("%q %q %q %v", user.Username, user.UID, emptyNil(user.Groups), extraOrNil(user.Extra))
	want := fmt.Sprintf("%q %q %q %v", resp.User.GetName(), resp.User.GetUID(), emptyNil(resp.User.GetGroups()), extraOrNil(resp.User.GetExtra()))
	if got != want {
		tl.diffs = append(tl.diffs, fmt.Sprintf("%s: apiserver user %s; ours %s", tc.Name, want, got))
		return
	}
	tl.agree++
	tl.accepted++
}

// report logs the agreement figures ("AGREEMENT <test> <agree>/<tokens>")
// and fails the test on any disagreement.
func (tl *tally) report(t *testing.T) {
	t.Helper()
	t.Logf("AGREEMENT %s %d/%d (%d accepted by both; %d reasons contradict the apiserver's)",
		t.Name(), tl.agree, tl.tokens, tl.accepted, len(tl.reasons))
	for _, d := range tl.diffs {
		t.Errorf("disagreement: %s", d)
	}
	for _, d := range tl.reasons {
		t.Errorf("reason: %s", d)
	}
}

// sameReason checks that our typed reason matches what the apiserver
// logged, where its message names one.
func sameReason(theirs, ours error) bool {
	if theirs == nil { // "not my issuer": the apiserver just passes
		return errors.Is(ours, oidc.ErrIssuerMismatch) || errors.Is(ours, oidc.ErrMalformedToken)
	}
	msg := theirs.Error()
	for sentinel, phrase := range map[error]string{
		oidc.ErrAudienceMismatch:     "expected audience",
		oidc.ErrExpired:              "token is expired",
		oidc.ErrNotYetValid:          "before the nbf",
		oidc.ErrEmailNotVerified:     "email not verified",
		oidc.ErrInvalidSignature:     "failed to verify signature",
		oidc.ErrUnknownKey:           "failed to verify signature",
		oidc.ErrDistributedClaims:    "distributed claim",
		oidc.ErrUnusableKey:          "failed to verify signature",
		oidc.ErrCriticalHeader:       "failed to verify signature",
		oidc.ErrKeysUnavailable:      "fetching keys",
		oidc.ErrUnsupportedAlgorithm: "unsupported algorithm",
		oidc.ErrNotReady:             "not initialized",
	} {
		if errors.Is(ours, sentinel) && !strings.Contains(msg, phrase) {
			return false
		}
	}
	return !strings.Contains(msg, "expected audience") || errors.Is(ours, oidc.ErrAudienceMismatch)
}

func emptyNil(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

func extraOrNil(m map[string][]string) map[string][]string {
	if len(m) == 0 {
		return nil
	}
	return m
}
