package jose

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var b64 = base64.RawURLEncoding.EncodeToString

func rsaJWK(t testing.TB, kid string) (*rsa.PrivateKey, string) {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	return k, `{"kty":"RSA","kid":"` + kid + `","n":"` + b64(k.N.Bytes()) + `","e":"AQAB"}`
}

func TestParseKeySet(t *testing.T) {
	_, rsaKey := rsaJWK(t, "r")
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	ecKey := `{"kty":"EC","crv":"P-256","kid":"e","x":"` + b64(ec.X.FillBytes(make([]byte, 32))) + `","y":"` + b64(ec.Y.FillBytes(make([]byte, 32))) + `"}`
	ed, _, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	with := func(key, member string) string { return strings.Replace(key, "{", "{"+member+",", 1) }
	for _, tc := range []struct {
		name, body string
		keys       int    // decoded keys; -1: the set fails
		skipped    int    // keys with skipInvalid
		problem    string // in the error
	}{
		{"two keys", `{"keys":[` + rsaKey + `,` + ecKey + `]}`, 2, 2, ""},
		{"keys member in another case", `{"KEYS":[` + rsaKey + `]}`, 1, 1, ""},
		{"no keys", `{}`, 0, 0, ""},
		{"null document", `null`, 0, 0, ""},
		{"non-signing alg kept", `{"keys":[` + with(rsaKey, `"alg":"RSA-OAEP"`) + `]}`, 1, 1, ""},
		{"lower-case alg kept", `{"keys":[` + with(rsaKey, `"alg":"rs256"`) + `]}`, 1, 1, ""},
		{"use enc kept", `{"keys":[` + with(rsaKey, `"use":"enc"`) + `]}`, 1, 1, ""},
		{"Ed25519", `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"` + b64(ed) + `"}]}`, 1, 1, ""},
		{"symmetric", `{"keys":[{"kty":"oct","k":"AAAA"}]}`, 1, 1, ""},
		{"unknown kty fails the set", `{"keys":[` + rsaKey + `,{"kty":"XYZ","kid":"x"}]}`, -1, 1, `unknown kty "XYZ"`},
		{"X25519 fails the set", `{"keys":[{"kty":"OKP","crv":"X25519","x":"AAAA"}]}`, -1, 0, "X25519"},
		{"x5u string fails the set", `{"keys":[` + with(rsaKey, `"x5u":"https://x"`) + `]}`, -1, 0, "x5u"},
		{"x5u object decodes", `{"keys":[` + with(rsaKey, `"x5u":{"Scheme":"https","User":{}}`) + `]}`, 1, 1, ""},
		{"x5u object with a wrong field type", `{"keys":[` + with(rsaKey, `"x5u":{"Host":1}`) + `]}`, -1, 0, "x5u"},
		{"duplicate member", `{"keys":[` + with(rsaKey, `"kid":"again"`) + `]}`, -1, 0, "duplicate"},
		{"numeric kid", `{"keys":[{"kty":"oct","kid":7,"k":"AAAA"}]}`, -1, 0, "not a string"},
		{"null entry", `{"keys":[null]}`, -1, 0, "unknown kty"},
		{"kty in lower case", `{"keys":[` + strings.Replace(rsaKey, `"RSA"`, `"rsa"`, 1) + `]}`, -1, 0, "unknown kty"},
		{"padded base64", `{"keys":[{"kty":"oct","k":"AA=="}]}`, -1, 0, "base64url"},
		{"short EC coordinate", `{"keys":[{"kty":"EC","crv":"P-256","x":"AAAA","y":"AAAA"}]}`, -1, 0, "coordinates"},
		{"x5t of the wrong size", `{"keys":[` + with(rsaKey, `"x5t":"`+b64([]byte("short"))+`"`) + `]}`, -1, 0, "x5t"},
		{"keys not a list", `{"keys":{}}`, -1, -1, ""},
		{"not JSON", `{"keys":[`, -1, -1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			keys, err := ParseKeySet([]byte(tc.body), false)
			if tc.keys < 0 {
				require.Error(t, err)
				var kse *KeySetError
				require.ErrorAs(t, err, &kse)
				require.Contains(t, kse.Error(), tc.problem)
			} else {
				require.NoError(t, err)
				require.Len(t, keys, tc.keys)
			}
			keys, err = ParseKeySet([]byte(tc.body), true)
			if tc.skipped < 0 {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Len(t, keys, tc.skipped)
		})
	}
}

func TestKeySetErrorNamesTheEntry(t *testing.T) {
	_, rsaKey := rsaJWK(t, "good")
	_, err := ParseKeySet([]byte(`{"keys":[`+rsaKey+`,{"kty":"OKP","crv":"X25519","kid":"bad","x":"AAAA"}]}`), false)
	var kse *KeySetError
	require.ErrorAs(t, err, &kse)
	require.Equal(t, 1, kse.Index)
	require.Equal(t, "bad", kse.KeyID)
}

func TestVerifyRefusesUnusableKeys(t *testing.T) {
	priv, rsaKey := rsaJWK(t, "r")
	k, err := DecodeKey([]byte(rsaKey))
	require.NoError(t, err)
	digest := Digest("RS256", "a.b")
	sig, err := priv.Sign(rand.Reader, digest, crypto.SHA256)
	require.NoError(t, err)
	ok, usable, _ := k.Verify("RS256", digest, sig)
	require.True(t, ok)
	require.True(t, usable)
	ok, usable, _ = k.Verify("RS256", digest, append([]byte{}, sig[:len(sig)-1]...))
	require.False(t, ok)
	require.True(t, usable, "a wrong signature: the key is fine")
	_, usable, problem := k.Verify("ES256", digest, make([]byte, 64))
	require.False(t, usable)
	require.Contains(t, problem, "RSA key cannot verify ES256")

	short, err := DecodeKey([]byte(`{"kty":"RSA","n":"` + b64(make([]byte, 64)) + `","e":"AQAB"}`))
	require.NoError(t, err, "go-jose v2 decodes a 512-bit key")
	_, usable, problem = short.Verify("RS256", digest, make([]byte, 64))
	require.False(t, usable)
	require.Contains(t, problem, "bits")
}

func TestParse(t *testing.T) {
	payload := []byte(`{"iss":"x"}`)
	tok := func(header string) string { return b64([]byte(header)) + "." + b64(payload) + "." + b64([]byte("sig")) }
	for _, tc := range []struct {
		name, token string
		err         string // "": parses
		alg, kid    string
		critOK      bool
	}{
		{"plain", tok(`{"alg":"RS256","kid":"k"}`), "", "RS256", "k", true},
		{"duplicate alg", tok(`{"alg":"RS256","alg":"none"}`), "duplicate", "", "", false},
		{"nested duplicate", tok(`{"alg":"RS256","x":[{"a":1,"a":1}]}`), "duplicate", "", "", false},
		{"missing alg", tok(`{"kid":"k"}`), `unsupported algorithm ""`, "", "", false},
		{"alg none", tok(`{"alg":"none"}`), `unsupported algorithm "none"`, "", "", false},
		{"escaped alg", tok(`{"alg":"RS\u0032\u0035\u0036"}`), "", "RS256", "", true},
		{"unknown crit", tok(`{"alg":"RS256","crit":["x"],"x":1}`), "", "RS256", "", false},
		{"crit b64", tok(`{"alg":"RS256","crit":["b64"],"b64":true}`), "", "RS256", "", true},
		{"kid a number", tok(`{"alg":"RS256","kid":1}`), "not a string", "", "", false},
		{"huge number", tok(`{"alg":"RS256","x":1e400}`), "range", "", "", false},
		{"header an array", tok(`[]`), "not an object", "", "", false},
		{"whitespace", strings.Replace(tok(`{"alg":"RS256"}`), ".", " .\n", 1), "", "RS256", "", true},
		{"four parts", tok(`{"alg":"RS256"}`) + ".x", "three", "", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j, err := Parse(tc.token, payload, nil)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.alg, j.Alg)
			require.Equal(t, tc.kid, j.KeyID)
			require.Equal(t, tc.critOK, j.CritOK)
			require.Equal(t, payload, j.Payload)
		})
	}
}

func TestParseSigningInput(t *testing.T) {
	h, p := b64([]byte(`{"alg":"RS256"}`)), b64([]byte(`{"iss":"x"}`))
	var cache HeaderCache
	j, err := Parse(h+"."+p+".c2ln", []byte(`{"iss":"x"}`), &cache)
	require.NoError(t, err)
	require.Equal(t, h+"."+p, j.SigningInput)

	unencoded := b64([]byte(`{"alg":"RS256","b64":false,"crit":["b64"]}`))
	j, err = Parse(unencoded+"."+p+".c2ln", []byte(`{"iss":"x"}`), &cache)
	require.NoError(t, err)
	require.Equal(t, unencoded+`.{"iss":"x"}`, j.SigningInput, "RFC 7797: the payload unencoded")
}

// FuzzParseKeySet: no panic; whatever the strict decoder accepts, the
// skipping one accepts with the same keys.
func FuzzParseKeySet(f *testing.F) {
	_, rsaKey := rsaJWK(f, "r")
	for _, s := range []string{`{"keys":[` + rsaKey + `]}`, `{"keys":[{"kty":"oct","k":"AAAA","x5c":["AAAA"]}]}`,
		`{"keys":[{"kty":"EC","crv":"P-256","x":"AAAA","y":"AAAA","d":""}]}`, `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"AAAA","d":"AA"}]}`,
		`{"keys":[{"kty":"RSA","n":"AQAB","e":"AQAB","d":"AQ","p":"AQ","q":"AQ"}]}`, `{"keys":[null,1,"x",[]]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		strict, err := ParseKeySet(body, false)
		lenient, lerr := ParseKeySet(body, true)
		if err == nil {
			require.NoError(t, lerr)
			require.Equal(t, len(strict), len(lenient))
		}
		var doc struct {
			Keys []json.RawMessage `json:"keys"`
		}
		require.Equal(t, json.Unmarshal(body, &doc) == nil, lerr == nil)
	})
}

var fuzzCache HeaderCache

// FuzzParse: no panic, a parsed token has a known algorithm, and the
// header cache changes nothing.
func FuzzParse(f *testing.F) {
	f.Add(`{"alg":"RS256","kid":"k","crit":["b64"],"b64":false}`, "c2ln")
	f.Add(`{"alg":"ES256","jwk":{"kty":"EC","crv":"P-256","x":"AAAA","y":"AAAA"}}`, "")
	f.Add(`{"alg":"PS384","x5c":["AAAA"],"nonce":"n"}`, " c2ln\n")
	f.Fuzz(func(t *testing.T, header, sig string) {
		payload := []byte(`{"iss":"x"}`)
		j, err := Parse(b64([]byte(header))+"."+b64(payload)+"."+sig, payload, nil)
		cached, cerr := Parse(b64([]byte(header))+"."+b64(payload)+"."+sig, payload, &fuzzCache)
		require.Equal(t, err == nil, cerr == nil, "the header cache changes nothing")
		if err != nil {
			return
		}
		require.Equal(t, j, cached)
		require.Contains(t, Algorithms, j.Alg)
		require.NotEmpty(t, j.SigningInput)
	})
}

// FuzzValid: Valid agrees with encoding/json.
func FuzzValid(f *testing.F) {
	for _, s := range []string{`{}`, `[1,2]`, `"\u00e9"`, `-0.1e+2`, `01`, `{"a":}`, `[,]`, `tru`, "\"\x01\"", `{"a":1}x`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		require.Equal(t, json.Valid(data), Valid(data, true))
	})
}
