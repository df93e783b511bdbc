package oidctest

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"strings"
	"testing"
	"time"

	"github.com/cozystack/tenantkit/oidc"
	"github.com/cozystack/tenantkit/ref"
)

// Case is one token of the bad-input corpus.
type Case struct {
	// Name says what is wrong with the token.
	Name string
	// Token is the token.
	Token string
	// Want is the reason (an oidc.ErrX sentinel) a Verifier for the
	// corpus's cluster must give; nil for the tokens it must accept.
	Want error
}

// CorpusConfig says whom the corpus's tokens are for.
type CorpusConfig struct {
	// Cluster is the cluster the verifier under test guards; the verifier
	// must use oidc.JWTAuthenticator(Cluster, iss.URL(), ...).
	Cluster ref.Cluster
	// Other is another cluster of the same issuer (default: Cluster with
	// the name suffixed "-other").
	Other ref.Cluster
	// Email is the user (default alice@example.org).
	Email string
}

// CorpusT returns tokens a verifier for cfg.Cluster must reject, each with
// the reason it must give, followed by a few it must accept (Want nil).
// Every token is built against iss; the corpus covers algorithm confusion,
// audiences, issuers, times, keys, signatures, the email and groups claims,
// the tenant gate, JOSE headers no library writes (a duplicate alg, no alg,
// an unknown crit) and malformed encodings. Build the verifier after
// calling CorpusT: it changes the JWKS (a key rotated out, an RSA key under
// 1024 bits published).
func CorpusT(t testing.TB, iss *Issuer, cfg CorpusConfig) []Case {
	t.Helper()
	if cfg.Other == (ref.Cluster{}) {
		cfg.Other = ref.Cluster{Namespace: cfg.Cluster.Namespace, Name: cfg.Cluster.Name + "-other"}
	}
	if cfg.Email == "" {
		cfg.Email = "alice@example.org"
	}
	aud := cfg.Cluster.ClientID()
	group := cfg.Cluster.TenantGroups()[2] // <ns>-admin
	good := func() map[string]any { return iss.Claims(aud, cfg.Email, group) }
	with := func(edit func(c map[string]any)) string {
		c := good()
		edit(c)
		return SignT(t, iss.Key(), c)
	}
	now := time.Now()
	var cases []Case
	add := func(name, token string, want error) { cases = append(cases, Case{name, token, want}) }

	// Algorithms.
	add("alg none", unsignedT(t, good()), oidc.ErrUnsupportedAlgorithm)
	add("HS256 keyed with the issuer's public key (PEM)", signHMACT(t, publicPEM(t, iss.Key()), good()), oidc.ErrUnsupportedAlgorithm)
	add("HS256 keyed with a guessed shared secret", signHMACT(t, []byte(strings.Repeat("s", 32)), good()), oidc.ErrUnsupportedAlgorithm)

	// Headers no JOSE library writes.
	payload := mustJSON(t, good())
	kid := iss.Key().ID
	alg := string(iss.Key().Algorithm)
	raw := func(header string) string { return SignRawT(t, iss.Key(), []byte(header), payload) }
	add("duplicate alg header, none last", raw(`{"alg":"`+alg+`","kid":"`+kid+`","alg":"none"}`), oidc.ErrMalformedToken)
	add("duplicate alg header, none first", raw(`{"alg":"none","kid":"`+kid+`","alg":"`+alg+`"}`), oidc.ErrMalformedToken)
	add("duplicate kid header", raw(`{"alg":"`+alg+`","kid":"`+kid+`","kid":"`+kid+`"}`), oidc.ErrMalformedToken)
	add("duplicate member nested in a header", raw(`{"alg":"`+alg+`","kid":"`+kid+`","x":{"a":1,"a":2}}`), oidc.ErrMalformedToken)
	add("missing alg header", raw(`{"kid":"`+kid+`","typ":"JWT"}`), oidc.ErrUnsupportedAlgorithm)
	add("alg header null", raw(`{"alg":null,"kid":"`+kid+`"}`), oidc.ErrUnsupportedAlgorithm)
	add("alg none under the issuer's kid", unsignedHeader(`{"alg":"none","kid":"`+kid+`"}`, payload), oidc.ErrUnsupportedAlgorithm)
	add("unknown crit header", raw(`{"alg":"`+alg+`","kid":"`+kid+`","crit":["urn:example:x"],"urn:example:x":1}`), oidc.ErrCriticalHeader)
	add("crit header not a list", raw(`{"alg":"`+alg+`","kid":"`+kid+`","crit":"b64"}`), oidc.ErrCriticalHeader)

	// Audience.
	add("wrong aud", with(func(c map[string]any) { c["aud"] = "someone-else" }), oidc.ErrAudienceMismatch)
	add("missing aud", with(func(c map[string]any) { delete(c, "aud") }), oidc.ErrAudienceMismatch)
	add("aud for the other cluster", with(func(c map[string]any) { c["aud"] = cfg.Other.ClientID() }), oidc.ErrAudienceMismatch)
	add("aud list without this cluster", with(func(c map[string]any) { c["aud"] = []string{cfg.Other.ClientID(), "kubectl"} }), oidc.ErrAudienceMismatch)
	add("aud differing in case", with(func(c map[string]any) { c["aud"] = strings.ToUpper(aud) }), oidc.ErrAudienceMismatch)

	// Issuer.
	add("wrong iss", with(func(c map[string]any) { c["iss"] = "https://evil.example.org" }), oidc.ErrIssuerMismatch)
	add("iss with trailing slash", with(func(c map[string]any) { c["iss"] = iss.URL() + "/" }), oidc.ErrIssuerMismatch)
	add("missing iss", with(func(c map[string]any) { delete(c, "iss") }), oidc.ErrIssuerMismatch)
	add("iss over http", with(func(c map[string]any) { c["iss"] = "http" + strings.TrimPrefix(iss.URL(), "https") }), oidc.ErrIssuerMismatch)
	add("iss not a string", with(func(c map[string]any) { c["iss"] = 42 }), oidc.ErrMalformedToken)

	// Times.
	add("expired", with(func(c map[string]any) { c["exp"] = now.Add(-time.Minute).Unix() }), oidc.ErrExpired)
	add("expired a second ago", with(func(c map[string]any) { c["exp"] = now.Add(-2 * time.Second).Unix() }), oidc.ErrExpired)
	add("missing exp", with(func(c map[string]any) { delete(c, "exp") }), oidc.ErrExpired)
	add("exp not a number", with(func(c map[string]any) { c["exp"] = "tomorrow" }), oidc.ErrMalformedToken)
	add("nbf in the future", with(func(c map[string]any) { c["nbf"] = now.Add(10 * time.Minute).Unix() }), oidc.ErrNotYetValid)
	add("nbf not a number", with(func(c map[string]any) { c["nbf"] = "soon" }), oidc.ErrMalformedToken)

	// Keys and signatures.
	stranger := GenerateKeyT(t, iss.Key().Algorithm)
	add("unknown kid", SignT(t, stranger, good()), oidc.ErrUnknownKey)
	rotated := iss.RotateKeyT(t)
	tok := SignT(t, iss.Key(), good())
	iss.RemoveKey(rotated.ID)
	add("key rotated out of the JWKS", tok, oidc.ErrUnknownKey)
	add("bad signature", flipSignature(SignT(t, iss.Key(), good())), oidc.ErrInvalidSignature)
	impostor := GenerateKeyT(t, iss.Key().Algorithm)
	impostor.ID = iss.Key().ID
	add("signed by another key under the issuer's kid", SignT(t, impostor, good()), oidc.ErrInvalidSignature)
	add("signature stripped", stripSignature(SignT(t, iss.Key(), good())), oidc.ErrInvalidSignature)
	weak := GenerateWeakRSAKeyT(t, 512)
	iss.PublishKey(weak)
	add("signed by a published RSA key under 1024 bits", SignT(t, weak, good()), oidc.ErrUnusableKey)
	add("algorithm of another key type under the issuer's kid", otherKeyType(iss.Key(), payload), oidc.ErrUnusableKey)

	// Claims the mapping needs.
	add("email_verified false", with(func(c map[string]any) { c["email_verified"] = false }), oidc.ErrEmailNotVerified)
	add("email_verified null", with(func(c map[string]any) { c["email_verified"] = nil }), oidc.ErrEmailNotVerified)
	add("email_verified a string", with(func(c map[string]any) { c["email_verified"] = "true" }), oidc.ErrClaim)
	add("missing email (the username claim)", with(func(c map[string]any) { delete(c, "email") }), oidc.ErrClaim)
	add("email a number", with(func(c map[string]any) { c["email"] = 7 }), oidc.ErrClaim)
	add("groups a number", with(func(c map[string]any) { c["groups"] = 7 }), oidc.ErrClaim)
	add("groups an object", with(func(c map[string]any) { c["groups"] = map[string]any{"g": group} }), oidc.ErrClaim)
	add("groups a list of numbers", with(func(c map[string]any) { c["groups"] = []int{1, 2} }), oidc.ErrClaim)
	add("distributed groups claim", with(func(c map[string]any) {
		delete(c, "groups")
		c["_claim_names"] = map[string]string{"groups": "src1"}
		c["_claim_sources"] = map[string]any{"src1": map[string]string{"endpoint": "https://127.0.0.1:1/groups"}}
	}), oidc.ErrDistributedClaims)

	// The tenant gate.
	add("not in a tenant group", with(func(c map[string]any) { c["groups"] = []string{"other-tenant-admin"} }), oidc.ErrRuleFailed)
	add("no groups claim", with(func(c map[string]any) { delete(c, "groups") }), oidc.ErrRuleFailed)
	// The apiserver maps a single-string groups claim, but the gate's
	// exists() cannot iterate a string: the rule errors and the token fails.
	add("groups a single string", with(func(c map[string]any) { c["groups"] = group }), oidc.ErrRuleFailed)
	add("groups of the other namespace", with(func(c map[string]any) { c["groups"] = []string{"x" + group} }), oidc.ErrRuleFailed)

	// Encodings.
	add("oversized token", with(func(c map[string]any) { c["pad"] = strings.Repeat("a", oidc.DefaultMaxTokenBytes) }), oidc.ErrTokenTooLarge)
	add("empty token", "", oidc.ErrMalformedToken)
	add("two parts", "eyJhbGciOiJSUzI1NiJ9.e30", oidc.ErrMalformedToken)
	add("four parts", SignT(t, iss.Key(), good())+".x", oidc.ErrMalformedToken)
	add("JSON serialization", `{"payload":"e30","signatures":[]}`, oidc.ErrMalformedToken)
	add("payload not base64url", "eyJhbGciOiJSUzI1NiJ9.!!!.c2ln", oidc.ErrMalformedToken)
	add("payload padded base64", padPayload(SignT(t, iss.Key(), good())), oidc.ErrMalformedToken)
	add("payload not JSON", SignPayloadT(t, iss.Key(), []byte("not json")), oidc.ErrMalformedToken)
	add("payload a JSON array", SignPayloadT(t, iss.Key(), []byte(`["iss"]`)), oidc.ErrMalformedToken)
	add("payload null", SignPayloadT(t, iss.Key(), []byte(`null`)), oidc.ErrMalformedToken)
	add("nested JSON depth bomb", SignPayloadT(t, iss.Key(), depthBomb(iss.URL(), 100000)), oidc.ErrMalformedToken)
	add("header not base64url", "%%%."+strings.SplitN(SignT(t, iss.Key(), good()), ".", 2)[1], oidc.ErrMalformedToken)

	// Tokens that must pass.
	add("valid", SignT(t, iss.Key(), good()), nil)
	add("valid, nbf within the leeway", with(func(c map[string]any) { c["nbf"] = now.Add(30 * time.Second).Unix() }), nil)
	add("valid, aud list including this cluster", with(func(c map[string]any) { c["aud"] = []string{cfg.Other.ClientID(), aud} }), nil)
	add("valid, email_verified absent", with(func(c map[string]any) { delete(c, "email_verified") }), nil)
	add("valid, no kid header", SignT(t, Key{Algorithm: iss.Key().Algorithm, Private: iss.Key().Private}, good()), nil)
	return cases
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("oidctest: marshal: %v", err)
	}
	return b
}

// unsignedHeader is header.payload with an empty signature.
func unsignedHeader(header string, payload []byte) string {
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(header)) + "." + enc.EncodeToString(payload) + "."
}

// otherKeyType claims k's kid with an algorithm of the other key type
// (ES256 for an RSA key, RS256 for an EC key) and a signature of the size
// that algorithm expects.
func otherKeyType(k Key, payload []byte) string {
	alg, size := "ES256", 64
	if strings.HasPrefix(string(k.Algorithm), "ES") {
		alg, size = "RS256", 256
	}
	enc := base64.RawURLEncoding
	sig := make([]byte, size)
	for i := range sig {
		sig[i] = byte(i + 1)
	}
	return unsignedHeader(`{"alg":"`+alg+`","kid":"`+k.ID+`"}`, payload) + enc.EncodeToString(sig)
}

func publicPEM(t testing.TB, k Key) []byte {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(k.Private.Public())
	if err != nil {
		t.Fatalf("oidctest: marshal public key: %v", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

// flipSignature changes one bit in the middle of the signature.
func flipSignature(tok string) string {
	i := strings.LastIndexByte(tok, '.')
	sig, _ := base64.RawURLEncoding.DecodeString(tok[i+1:])
	sig[len(sig)/2] ^= 0x01
	return tok[:i+1] + base64.RawURLEncoding.EncodeToString(sig)
}

func stripSignature(tok string) string { return tok[:strings.LastIndexByte(tok, '.')+1] }

// padPayload re-encodes the payload with '=' padding (the signature no
// longer covers it, but the parser must refuse first).
func padPayload(tok string) string {
	parts := strings.Split(tok, ".")
	p, _ := base64.RawURLEncoding.DecodeString(parts[1])
	for len(p)%3 == 0 {
		p = append(p, ' ')
	}
	parts[1] = base64.URLEncoding.EncodeToString(p)
	return strings.Join(parts, ".")
}

// depthBomb is a payload with a valid iss and an array nested depth deep.
func depthBomb(issuer string, depth int) []byte {
	return []byte(`{"iss":"` + issuer + `","x":` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}`)
}
