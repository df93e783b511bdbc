package apiserverauthn_test

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	josev2 "gopkg.in/go-jose/go-jose.v2"
	"k8s.io/apiserver/pkg/authentication/authenticator"

	"github.com/cozystack/tenantkit/oidc"
	"github.com/cozystack/tenantkit/oidc/internal/jose"
	"github.com/cozystack/tenantkit/oidc/oidctest"
)

// The JOSE reader package oidc verifies with (oidc/internal/jose) against
// go-jose v2.6.3, what kube-apiserver 1.37 runs: the same JWKS documents
// decode to the same keys, the same tokens parse with the same headers and
// verify with the same keys.

// jwksSeeds are JWKS documents from the JWKS scenarios and beyond.
func jwksSeeds(t testing.TB) []string {
	var out []string
	for _, alg := range []string{"RS256", "ES256"} {
		k := oidctest.GenerateKeyT(t, joseAlg(alg))
		raw, err := josev2.JSONWebKey{Key: k.Private.Public(), KeyID: k.ID, Algorithm: string(k.Algorithm), Use: "sig"}.MarshalJSON()
		require.NoError(t, err)
		doc := func(extra ...string) string {
			return `{"keys":[` + strings.Join(append([]string{string(raw)}, extra...), ",") + `]}`
		}
		out = append(out, doc(), doc(`{"kty":"XYZ"}`), doc(`{"kty":"OKP","crv":"X25519","x":"AAAA"}`), doc(`null`),
			doc(`{"kty":"oct","k":"AAAA","kid":"h"}`), doc(`{"kty":"EC","crv":"P-256","x":"AAAA","y":"AAAA"}`),
			strings.Replace(doc(), "{", `{"x5u":"https://x",`, 2), strings.Replace(doc(), "{", `{"x5u":{"Scheme":"h","User":{"a":1}},`, 2),
			strings.Replace(doc(), "{", `{"x5t":"AAAA",`, 2), strings.Replace(doc(), "{", `{"use":"enc","alg":"rs256",`, 2),
			strings.Replace(doc(), "{", `{"kid":"a",`, 2), strings.Replace(doc(), "{", `{"x5c":["AAAA"],`, 2))
	}
	return append(out, `{}`, `null`, `{"keys":null}`, `{"KEYS":[]}`, `{"keys":[1]}`, `{"keys":[{"kty":"oct","k":""}]}`,
		`{"keys":[{"kty":"RSA","n":"AQAB","e":"AQAB","d":"AQ","p":"AQ","q":"AQ"}]}`,
		`{"keys":[{"kty":"OKP","crv":"Ed25519","x":"AAAA","d":"AAAA"}]}`, `{"keys":[{"kty":"EC","crv":"P-256","x":"","y":"","d":""}]}`)
}

// FuzzKeySetMatchesGoJoseV2 decodes a JWKS with jose.ParseKeySet and as
// go-oidc v2 does (encoding/json into go-jose v2's JSONWebKeySet).
func FuzzKeySetMatchesGoJoseV2(f *testing.F) {
	for _, s := range jwksSeeds(f) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var theirs josev2.JSONWebKeySet
		theirErr := json.Unmarshal(body, &theirs)
		ours, ourErr := jose.ParseKeySet(body, false)
		require.Equal(t, theirErr == nil, ourErr == nil, "go-jose v2: %v; ours: %v", theirErr, ourErr)
		if theirErr != nil {
			return
		}
		require.Len(t, ours, len(theirs.Keys))
		for i, k := range theirs.Keys {
			require.Equal(t, k.KeyID, ours[i].ID)
			require.Equal(t, k.Algorithm, ours[i].Algorithm)
			require.True(t, sameKey(k.Key, ours[i].Key), "key %d: %T vs %T", i, k.Key, ours[i].Key)
		}
	})
}

// sameKey compares two decoded keys: both decoders build them the same
// way (struct literals, big.Int.SetBytes), so they are deeply equal.
func sameKey(a, b any) bool { return reflect.DeepEqual(a, b) }

// FuzzJWSMatchesGoJoseV2 builds a token from a fuzzed header, signs what
// oidc/internal/jose says the signing input is, and requires go-jose v2 to
// parse it the same way (error, alg, kid) and to verify it exactly when
// ours does.
func FuzzJWSMatchesGoJoseV2(f *testing.F) {
	for _, h := range []string{`{"alg":"RS256","kid":"k"}`, `{"alg":"RS256","alg":"none"}`, `{"kid":"k"}`, `{"alg":null}`,
		`{"alg":"RS256","crit":["b64"],"b64":false}`, `{"alg":"RS256","b64":false}`, `{"alg":"RS256","b64":"x"}`,
		`{"alg":"RS256","crit":["exp"]}`, `{"alg":"RS256","crit":[1]}`, `{"alg":"RS256","crit":null}`, `{"alg":"PS256"}`,
		`{"alg":"RS256","jwk":{"kty":"oct","k":"AAAA"}}`, `{"alg":"RS256","x":{"a":1,"a":2}}`, `{"alg":"RS256","x":1e400}`,
		`{"alg":"RS256","x5c":["AAAA"]}`, `{"alg":"RS256","nonce":1}`, `null`, `[]`, ``, `{"alg":"RS\u0032\u0035\u0036"}`} {
		f.Add(h, " \n")
	}
	key := oidctest.GenerateKeyT(f, "RS256")
	pub := key.Private.Public()
	f.Fuzz(func(t *testing.T, header, space string) {
		enc := base64.RawURLEncoding
		payload := []byte(`{"iss":"https://idp","x":1}`)
		h := enc.EncodeToString([]byte(header))
		if len(space) > 3 {
			space = space[:3]
		}
		unsigned := h[:len(h)/2] + space + h[len(h)/2:] + "." + enc.EncodeToString(payload) + "."
		ours, ourErr := jose.Parse(unsigned+"c2ln", payload, nil)
		theirs, theirErr := josev2.ParseSigned(unsigned + "c2ln")
		if theirErr == nil && !slices.Contains(jose.Algorithms[:], theirs.Signatures[0].Header.Algorithm) {
			theirErr = errUnsupported // go-oidc v2 refuses the algorithm next
		}
		require.Equal(t, theirErr == nil, ourErr == nil, "go-jose v2: %v; ours: %v", theirErr, ourErr)
		if ourErr != nil {
			return
		}
		require.Equal(t, theirs.Signatures[0].Header.Algorithm, ours.Alg)
		require.Equal(t, theirs.Signatures[0].Header.KeyID, ours.KeyID)
		if ours.Alg[:2] != "RS" && ours.Alg[:2] != "PS" {
			return
		}
		sig, err := key.Private.Sign(rand.Reader, jose.Digest(ours.Alg, ours.SigningInput), pssOrNot(ours.Alg))
		require.NoError(t, err)
		signed := unsigned + enc.EncodeToString(sig)
		ours, err = jose.Parse(signed, payload, nil)
		require.NoError(t, err)
		ok, _, _ := jose.Key{Key: pub}.Verify(ours.Alg, jose.Digest(ours.Alg, ours.SigningInput), ours.Signature)
		ok = ok && ours.CritOK
		theirs, err = josev2.ParseSigned(signed)
		require.NoError(t, err)
		_, theirVerifyErr := theirs.Verify(pub)
		require.Equal(t, theirVerifyErr == nil, ok, "go-jose v2 verify: %v", theirVerifyErr)
	})
}

var errUnsupported = errorString("unsupported algorithm")

type errorString string

func (e errorString) Error() string { return string(e) }

func pssOrNot(alg string) crypto.SignerOpts {
	h := map[string]crypto.Hash{"256": crypto.SHA256, "384": crypto.SHA384, "512": crypto.SHA512}[alg[2:]]
	if alg[:2] == "PS" {
		return &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash, Hash: h}
	}
	return h
}

// FuzzPayloadMatchesAPIServer signs fuzzed payloads with the issuer's key
// and requires the apiserver and the Verifier to decide them alike and to
// map accepted ones to the same user, on the configuration Cozystack
// renders and on one exercising every mapping.
func FuzzPayloadMatchesAPIServer(f *testing.F) {
	iss := oidctest.StartT(f, oidctest.Config{})
	now := time.Now()
	valid, err := json.Marshal(validClaims(iss))
	require.NoError(f, err)
	for _, s := range []string{string(valid),
		strings.Replace(string(valid), `"iss"`, `"ISS":"x","iss"`, 1),
		strings.Replace(string(valid), `"exp"`, `"EXP":null,"exp"`, 1),
		strings.Replace(string(valid), `"aud"`, `"aud":null,"Aud"`, 1),
		strings.Replace(string(valid), `"exp":`, `"exp":"`+fmt.Sprint(now.Add(time.Hour).Unix())+`","x":`, 1),
		strings.Replace(string(valid), `"groups"`, `"_claim_names":{"groups":"s"},"_claim_sources":{"s":{"endpoint":""}},"groups"`, 1),
		strings.Replace(string(valid), `"email"`, `"jti":"j","roles":["a"],"tenant":"t","hd":"example.org","email"`, 1),
		strings.Replace(string(valid), `"sub"`, `"nbf":1e400,"sub"`, 1),
		strings.Replace(string(valid), `"sub"`, `"iat":null,"sub"`, 1),
	} {
		f.Add([]byte(s))
	}
	cfgs := configs(iss)
	type pair struct {
		theirs authenticator.Token
		ours   *oidc.Verifier
	}
	var pairs []pair
	for _, name := range []string{"cozystack-system", "cel"} {
		pairs = append(pairs, pair{newAPIServerAuthenticator(f, iss, cfgs[name]), newVerifier(f, iss, cfgs[name])})
	}
	key := iss.Key()
	f.Fuzz(func(t *testing.T, payload []byte) {
		tok, err := key.SignPayload(payload)
		require.NoError(t, err)
		for _, p := range pairs {
			resp, ok, theirErr := p.theirs.AuthenticateToken(context.Background(), tok)
			user, ourErr := p.ours.Verify(context.Background(), tok)
			theyAccept := ok && theirErr == nil
			require.Equal(t, theyAccept, ourErr == nil, "apiserver ok=%v err=%v; ours err=%v", ok, theirErr, ourErr)
			if theyAccept {
				require.Equal(t, resp.User.GetName(), user.Username)
				require.Equal(t, resp.User.GetUID(), user.UID)
				require.Equal(t, emptyNil(resp.User.GetGroups()), emptyNil(user.Groups))
				require.Equal(t, extraOrNil(resp.User.GetExtra()), extraOrNil(user.Extra))
			}
		}
	})
}
