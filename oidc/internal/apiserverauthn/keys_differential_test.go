package apiserverauthn_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/stretchr/testify/require"

	"github.com/cozystack/tenantkit/oidc"
	"github.com/cozystack/tenantkit/oidc/oidctest"
)

// jwksScenario is a JWKS shape some provider serves: setup publishes extra
// keys and returns the tokens signed by them; edit rewrites the served
// "keys" (first entry: the issuer's signing key).
type jwksScenario struct {
	name  string
	setup func(t *testing.T, iss *oidctest.Issuer) []oidctest.Case
	edit  func(t *testing.T, iss *oidctest.Issuer, keys []json.RawMessage) []json.RawMessage
}

// setMember returns the JWK object raw with member name set to v.
func setMember(t testing.TB, raw json.RawMessage, name string, v any) json.RawMessage {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(raw, &m))
	m[name] = v
	out, err := json.Marshal(m)
	require.NoError(t, err)
	return out
}

func appendRaw(objects ...string) func(*testing.T, *oidctest.Issuer, []json.RawMessage) []json.RawMessage {
	return func(_ *testing.T, _ *oidctest.Issuer, keys []json.RawMessage) []json.RawMessage {
		for _, o := range objects {
			keys = append(keys, json.RawMessage(o))
		}
		return keys
	}
}

func editFirst(name string, v any) func(*testing.T, *oidctest.Issuer, []json.RawMessage) []json.RawMessage {
	return func(t *testing.T, _ *oidctest.Issuer, keys []json.RawMessage) []json.RawMessage {
		keys[0] = setMember(t, keys[0], name, v)
		return keys
	}
}

var b64 = base64.RawURLEncoding.EncodeToString

func jwksScenarios() []jwksScenario {
	x25519 := `{"kty":"OKP","crv":"X25519","kid":"x25519","x":"` + b64(make([]byte, 32)) + `"}`
	edPub, _, _ := ed25519.GenerateKey(rand.Reader)
	return []jwksScenario{
		{name: "plain"},
		{name: "signing key with a non-signing alg", edit: func(t *testing.T, iss *oidctest.Issuer, keys []json.RawMessage) []json.RawMessage {
			alg := "RSA-OAEP"
			if strings.HasPrefix(string(iss.Key().Algorithm), "ES") {
				alg = "ECDH-ES"
			}
			keys[0] = setMember(t, keys[0], "alg", alg)
			return keys
		}},
		{name: "signing key with a lower-case alg", edit: func(t *testing.T, iss *oidctest.Issuer, keys []json.RawMessage) []json.RawMessage {
			keys[0] = setMember(t, keys[0], "alg", strings.ToLower(string(iss.Key().Algorithm)))
			return keys
		}},
		{name: "signing key with use enc", edit: editFirst("use", "enc")},
		{name: "signing key without alg and use", edit: func(t *testing.T, _ *oidctest.Issuer, keys []json.RawMessage) []json.RawMessage {
			var m map[string]any
			require.NoError(t, json.Unmarshal(keys[0], &m))
			delete(m, "alg")
			delete(m, "use")
			keys[0], _ = json.Marshal(m)
			return keys
		}},
		{name: "signing key with an x5u", edit: editFirst("x5u", "https://idp.example.org/cert.pem")},
		{name: "signing key with an x5u object", edit: editFirst("x5u", map[string]any{"Scheme": "https", "Host": "idp.example.org"})},
		{name: "signing key with a matching x5c", edit: func(t *testing.T, iss *oidctest.Issuer, keys []json.RawMessage) []json.RawMessage {
			keys[0] = setMember(t, keys[0], "x5c", []string{base64.StdEncoding.EncodeToString(selfSigned(t, iss.Key()))})
			return keys
		}},
		{name: "signing key with another key's x5c", edit: func(t *testing.T, iss *oidctest.Issuer, keys []json.RawMessage) []json.RawMessage {
			keys[0] = setMember(t, keys[0], "x5c", []string{base64.StdEncoding.EncodeToString(selfSigned(t, oidctest.GenerateKeyT(t, iss.Key().Algorithm)))})
			return keys
		}},
		{name: "signing key with an x5t of the wrong size", edit: editFirst("x5t", b64([]byte("short")))},
		{name: "signing key with kty in lower case", edit: func(t *testing.T, _ *oidctest.Issuer, keys []json.RawMessage) []json.RawMessage {
			var m map[string]any
			require.NoError(t, json.Unmarshal(keys[0], &m))
			m["kty"] = strings.ToLower(m["kty"].(string))
			keys[0], _ = json.Marshal(m)
			return keys
		}},
		{name: "signing key with a duplicate member", edit: func(_ *testing.T, _ *oidctest.Issuer, keys []json.RawMessage) []json.RawMessage {
			keys[0] = json.RawMessage(strings.Replace(string(keys[0]), "{", `{"use":"sig",`, 1))
			return keys
		}},
		{name: "extra key of an unknown kty", edit: appendRaw(`{"kty":"XYZ","kid":"xyz"}`)},
		{name: "extra OKP X25519 key", edit: appendRaw(x25519)},
		{name: "extra OKP Ed25519 key", edit: appendRaw(`{"kty":"OKP","crv":"Ed25519","kid":"ed","x":"` + b64(edPub) + `"}`)},
		{name: "extra symmetric key", edit: appendRaw(`{"kty":"oct","kid":"hmac","k":"` + b64([]byte("0123456789abcdef0123456789abcdef")) + `"}`)},
		{name: "extra EC key with a short x", edit: appendRaw(`{"kty":"EC","crv":"P-256","kid":"short","x":"AAAA","y":"AAAA"}`)},
		{name: "extra key with a numeric kid", edit: appendRaw(`{"kty":"oct","kid":7,"k":"AAAA"}`)},
		{name: "extra key null", edit: appendRaw(`null`)},
		{name: "extra RSA private key", edit: func(t *testing.T, _ *oidctest.Issuer, keys []json.RawMessage) []json.RawMessage {
			priv, err := rsa.GenerateKey(rand.Reader, 2048)
			require.NoError(t, err)
			raw, err := jose.JSONWebKey{Key: priv, KeyID: "private"}.MarshalJSON()
			require.NoError(t, err)
			return append(keys, raw)
		}},
		{name: "no keys", edit: func(*testing.T, *oidctest.Issuer, []json.RawMessage) []json.RawMessage { return nil }},
		{name: "extra RSA key under 1024 bits", setup: func(t *testing.T, iss *oidctest.Issuer) []oidctest.Case {
			weak := oidctest.GenerateWeakRSAKeyT(t, 512)
			iss.PublishKey(weak)
			return []oidctest.Case{{Name: "signed by the weak key", Token: oidctest.SignT(t, weak, validClaims(iss))}}
		}},
		{name: "duplicate kid, a stranger's key first", setup: func(t *testing.T, iss *oidctest.Issuer) []oidctest.Case {
			stranger := oidctest.GenerateKeyT(t, iss.Key().Algorithm)
			stranger.ID = iss.Key().ID
			iss.PublishKey(stranger)
			return []oidctest.Case{{Name: "signed by the stranger under the shared kid", Token: oidctest.SignT(t, stranger, validClaims(iss))}}
		}, edit: func(_ *testing.T, _ *oidctest.Issuer, keys []json.RawMessage) []json.RawMessage {
			return append([]json.RawMessage{keys[len(keys)-1]}, keys[:len(keys)-1]...)
		}},
	}
}

func validClaims(iss *oidctest.Issuer) map[string]any {
	return iss.Claims(acme.ClientID(), "alice@example.org", "tenant-acme-admin")
}

// selfSigned returns a DER certificate for k's public key.
func selfSigned(t testing.TB, k oidctest.Key) []byte {
	t.Helper()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: k.ID},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, k.Private.Public(), k.Private)
	require.NoError(t, err)
	return der
}

// jwksTokens are the tokens every JWKS scenario checks: valid ones with
// and without kid, and ones the keys must refuse.
func jwksTokens(t *testing.T, iss *oidctest.Issuer) []oidctest.Case {
	k := iss.Key()
	return []oidctest.Case{
		{Name: "valid", Token: oidctest.SignT(t, iss.Key(), validClaims(iss))},
		{Name: "valid without kid", Token: oidctest.SignT(t, oidctest.Key{Algorithm: k.Algorithm, Private: k.Private}, validClaims(iss))},
		{Name: "unknown kid", Token: oidctest.SignT(t, oidctest.GenerateKeyT(t, k.Algorithm), validClaims(iss))},
		{Name: "stranger without kid", Token: oidctest.SignT(t, oidctest.Key{Algorithm: k.Algorithm, Private: oidctest.GenerateKeyT(t, k.Algorithm).Private}, validClaims(iss))},
	}
}

// TestDifferentialJWKS runs both implementations against issuers whose
// JWKS carries what real providers publish besides their signing keys.
func TestDifferentialJWKS(t *testing.T) {
	for _, alg := range []string{"RS256", "ES256"} {
		for _, sc := range jwksScenarios() {
			t.Run(alg+"/"+sc.name, func(t *testing.T) {
				iss := oidctest.StartT(t, oidctest.Config{Algorithm: joseAlg(alg)})
				tokens := jwksTokens(t, iss)
				if sc.setup != nil {
					tokens = append(tokens, sc.setup(t, iss)...)
				}
				if sc.edit != nil {
					iss.SetKeysJSON(func(keys []json.RawMessage) []json.RawMessage { return sc.edit(t, iss, keys) })
				}
				jwt := oidc.JWTAuthenticator(acme, iss.URL(), iss.CAPEM())
				compare(t, newAPIServerAuthenticator(t, iss, jwt), newVerifier(t, iss, jwt), tokens)
			})
		}
	}
}

// TestDifferentialHeaders runs both on tokens whose JOSE header no library
// writes: duplicate members, no alg, crit, b64, whitespace.
func TestDifferentialHeaders(t *testing.T) {
	for _, alg := range []string{"RS256", "ES256", "PS256"} {
		t.Run(alg, func(t *testing.T) {
			iss := oidctest.StartT(t, oidctest.Config{Algorithm: joseAlg(alg)})
			jwt := oidc.JWTAuthenticator(acme, iss.URL(), iss.CAPEM())
			compare(t, newAPIServerAuthenticator(t, iss, jwt), newVerifier(t, iss, jwt), rawHeaderTokens(t, iss))
		})
	}
}

func rawHeaderTokens(t *testing.T, iss *oidctest.Issuer) []oidctest.Case {
	k := iss.Key()
	payload, err := json.Marshal(validClaims(iss))
	require.NoError(t, err)
	kid, alg := k.ID, string(k.Algorithm)
	head := func(rest string) string { return `{"alg":"` + alg + `","kid":"` + kid + `"` + rest + `}` }
	var out []oidctest.Case
	for name, h := range map[string]string{
		"plain":                   head(``),
		"duplicate alg, none":     head(`,"alg":"none"`),
		"duplicate alg, same":     head(`,"alg":"` + alg + `"`),
		"duplicate kid":           head(`,"kid":"` + kid + `"`),
		"duplicate nested":        head(`,"x":{"a":1,"a":2}`),
		"duplicate nested deeper": head(`,"x":[{"b":{"a":1,"a":2}}]`),
		"missing alg":             `{"kid":"` + kid + `"}`,
		"alg null":                `{"alg":null,"kid":"` + kid + `"}`,
		"alg a number":            `{"alg":7,"kid":"` + kid + `"}`,
		"kid a number":            `{"alg":"` + alg + `","kid":7}`,
		"kid null":                `{"alg":"` + alg + `","kid":null}`,
		"alg escaped":             `{"alg":"` + strings.Replace(alg, "2", `\u0032`, 1) + `","kid":"` + kid + `"}`,
		"alg lower case":          `{"alg":"` + strings.ToLower(alg) + `","kid":"` + kid + `"}`,
		"crit unknown":            head(`,"crit":["urn:x"],"urn:x":1`),
		"crit b64 true":           head(`,"crit":["b64"],"b64":true`),
		"crit not a list":         head(`,"crit":"b64"`),
		"crit list of numbers":    head(`,"crit":[1]`),
		"crit null":               head(`,"crit":null`),
		"b64 a string":            head(`,"b64":"false"`),
		"nonce a number":          head(`,"nonce":1`),
		"x5c not certificates":    head(`,"x5c":["AAAA"]`),
		"jwk symmetric":           head(`,"jwk":{"kty":"oct","k":"AAAA"}`),
		"huge number":             head(`,"x":1e400`),
		"header is an array":      `["alg"]`,
		"header null":             `null`,
		"header empty object":     `{}`,
		"header with whitespace":  "{ \"alg\" : \"" + alg + "\" ,\n\"kid\":\"" + kid + "\" }",
	} {
		out = append(out, oidctest.Case{Name: "header " + name, Token: oidctest.SignRawT(t, k, []byte(h), payload)})
	}
	// b64=false: the signature covers the payload unencoded (RFC 7797),
	// which go-jose v2 honours with or without crit.
	enc := base64.RawURLEncoding
	for name, h := range map[string]string{
		"b64 false under crit": head(`,"b64":false,"crit":["b64"]`),
		"b64 false alone":      head(`,"b64":false`),
	} {
		sig, err := k.SignBytes(append([]byte(enc.EncodeToString([]byte(h))+"."), payload...))
		require.NoError(t, err)
		out = append(out, oidctest.Case{Name: "header " + name, Token: enc.EncodeToString([]byte(h)) + "." + enc.EncodeToString(payload) + "." + enc.EncodeToString(sig)})
	}
	good := oidctest.SignT(t, iss.Key(), validClaims(iss))
	parts := strings.Split(good, ".")
	out = append(out,
		oidctest.Case{Name: "newline inside the header part", Token: parts[0][:5] + "\n" + parts[0][5:] + "." + parts[1] + "." + parts[2]},
		oidctest.Case{Name: "space inside the header part", Token: parts[0][:5] + " " + parts[0][5:] + "." + parts[1] + "." + parts[2]},
		oidctest.Case{Name: "newline inside the payload part", Token: parts[0] + "." + parts[1][:5] + "\r\n" + parts[1][5:] + "." + parts[2]},
		oidctest.Case{Name: "tab inside the signature", Token: parts[0] + "." + parts[1] + "." + parts[2][:5] + "\t" + parts[2][5:]},
		oidctest.Case{Name: "no-break space inside the signature", Token: parts[0] + "." + parts[1] + "." + parts[2][:5] + "\u00a0" + parts[2][5:]},
		oidctest.Case{Name: "leading space", Token: " " + good},
		oidctest.Case{Name: "trailing newline", Token: good + "\n"},
		oidctest.Case{Name: "signature with non-zero trailing bits", Token: tweakLastChar(good)},
		oidctest.Case{Name: "payload with non-zero trailing bits", Token: parts[0] + "." + tweakLastChar(parts[1]) + "." + parts[2]},
	)
	return out
}

// tweakLastChar sets the unused low bits of the last base64url character
// (when there are any): the decoded bytes stay the same.
func tweakLastChar(s string) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	if len(s)%4 == 0 {
		return s
	}
	i := strings.IndexByte(alphabet, s[len(s)-1])
	return s[:len(s)-1] + string(alphabet[i|1])
}

// TestDifferentialKeyRotation rotates the signing key under several
// Cache-Control headers and compares what each implementation accepts at
// every step: kube-apiserver 1.37 refetches keys only when a token fails
// and the cached set has expired.
func TestDifferentialKeyRotation(t *testing.T) {
	for _, cc := range []string{"max-age=600", "-", "no-cache", "max-age=10", "public, max-age=600, s-maxage=0"} {
		t.Run(cc, func(t *testing.T) {
			iss := oidctest.StartT(t, oidctest.Config{CacheControl: cc})
			jwt := oidc.JWTAuthenticator(acme, iss.URL(), iss.CAPEM())
			theirs, ours := newAPIServerAuthenticator(t, iss, jwt), newVerifier(t, iss, jwt)
			var tl tally
			step := func(name string, k oidctest.Key) {
				tl.add(t, theirs, ours, oidctest.Case{Name: name, Token: oidctest.SignT(t, k, validClaims(iss))})
			}
			first := iss.Key()
			step("first key", first)
			next := iss.RotateKeyT(t)
			step("new key while the old one is published", next)
			step("old key while both are published", first)
			iss.RemoveKey(first.ID)
			step("old key after it left the JWKS", first)
			step("new key after the old one left", next)
			third := iss.RotateKeyT(t)
			iss.RemoveKey(next.ID)
			step("third key", third)
			step("second key after it left", next)
			tl.report(t)
		})
	}
}
