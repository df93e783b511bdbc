package oidctest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"testing"

	jose "github.com/go-jose/go-jose/v4"
)

// Sign signs claims with k (kid header k.ID, omitted when empty) and
// returns a compact JWS.
func (k Key) Sign(claims map[string]any) (string, error) {
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", fmt.Errorf("oidctest: marshal claims: %w", err)
	}
	return k.SignPayload(payload)
}

// SignPayload signs arbitrary payload bytes with k: malformed JSON, a
// nesting bomb, anything a test needs to get past the signature check.
func (k Key) SignPayload(payload []byte) (string, error) {
	return k.SignWithHeaders(nil, payload)
}

// SignWithHeaders signs payload with extra protected headers (crit, jku,
// a numeric kid, ...).
func (k Key) SignWithHeaders(headers map[string]any, payload []byte) (string, error) {
	switch k.Private.(type) {
	case *rsa.PrivateKey, *ecdsa.PrivateKey:
	default: // a key go-jose does not know (GenerateWeakRSAKey)
		h := map[string]any{"alg": k.Algorithm, "typ": "JWT"}
		if k.ID != "" {
			h["kid"] = k.ID
		}
		for name, v := range headers {
			h[name] = v
		}
		header, err := json.Marshal(h)
		if err != nil {
			return "", fmt.Errorf("oidctest: marshal header: %w", err)
		}
		return k.SignRaw(header, payload)
	}
	jwk := jose.JSONWebKey{Key: k.Private, KeyID: k.ID, Algorithm: string(k.Algorithm)}
	opts := (&jose.SignerOptions{}).WithType("JWT")
	for name, v := range headers {
		opts = opts.WithHeader(jose.HeaderKey(name), v)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.SignatureAlgorithm(k.Algorithm), Key: jwk}, opts)
	if err != nil {
		return "", fmt.Errorf("oidctest: new signer: %w", err)
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		return "", fmt.Errorf("oidctest: sign: %w", err)
	}
	return jws.CompactSerialize()
}

// SignT is k.Sign for tests: it fails the test on error.
func SignT(t testing.TB, k Key, claims map[string]any) string {
	t.Helper()
	tok, err := k.Sign(claims)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// SignPayloadT is k.SignPayload for tests: it fails the test on error.
func SignPayloadT(t testing.TB, k Key, payload []byte) string {
	t.Helper()
	tok, err := k.SignPayload(payload)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// signHMAC signs claims with HS256 and secret: the key-confusion attack
// when secret is the issuer's public key.
func signHMAC(secret []byte, claims map[string]any) (string, error) {
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", fmt.Errorf("oidctest: marshal claims: %w", err)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: secret}, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return "", fmt.Errorf("oidctest: new signer: %w", err)
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		return "", fmt.Errorf("oidctest: sign: %w", err)
	}
	return jws.CompactSerialize()
}

// signHMACT is signHMAC for tests: it fails the test on error.
func signHMACT(t testing.TB, secret []byte, claims map[string]any) string {
	t.Helper()
	tok, err := signHMAC(secret, claims)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// unsigned returns an alg "none" token with an empty signature.
func unsigned(claims map[string]any) (string, error) {
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", fmt.Errorf("oidctest: marshal claims: %w", err)
	}
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + enc.EncodeToString(payload) + ".", nil
}

// unsignedT is unsigned for tests: it fails the test on error.
func unsignedT(t testing.TB, claims map[string]any) string {
	t.Helper()
	tok, err := unsigned(claims)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// SignRaw signs payload under header, both used byte for byte: a header
// no JOSE library writes (a duplicate alg, no alg, an unknown crit) with
// a valid signature by k. The signature follows header's alg when it is
// one of k's (RS*, PS* for RSA keys, ES* for EC keys) and k.Algorithm
// otherwise.
func (k Key) SignRaw(header, payload []byte) (string, error) {
	enc := base64.RawURLEncoding
	input := enc.EncodeToString(header) + "." + enc.EncodeToString(payload)
	sig, err := k.signInput(headerAlg(header, jose.SignatureAlgorithm(k.Algorithm)), []byte(input))
	if err != nil {
		return "", err
	}
	return input + "." + enc.EncodeToString(sig), nil
}

// SignRawT is k.SignRaw for tests: it fails the test on error.
func SignRawT(t testing.TB, k Key, header, payload []byte) string {
	t.Helper()
	tok, err := k.SignRaw(header, payload)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// SignBytes signs arbitrary bytes (a JWS signing input a test builds
// itself, such as one with an unencoded payload) with k.Algorithm and
// returns the raw signature.
func (k Key) SignBytes(input []byte) ([]byte, error) {
	return k.signInput(jose.SignatureAlgorithm(k.Algorithm), input)
}

// headerAlg is the last alg in header that fits the key, else def.
func headerAlg(header []byte, def jose.SignatureAlgorithm) jose.SignatureAlgorithm {
	var h struct {
		Alg string `json:"alg"`
	}
	if json.Unmarshal(header, &h) == nil && len(h.Alg) == 5 && h.Alg[:2] == string(def)[:2] {
		return jose.SignatureAlgorithm(h.Alg)
	}
	return def
}

// signInput signs the JWS signing input with alg: PKCS #1 v1.5, PSS or
// ECDSA with the raw r||s encoding of RFC 7518.
func (k Key) signInput(alg jose.SignatureAlgorithm, input []byte) ([]byte, error) {
	var h crypto.Hash
	switch alg[2:] {
	case "256":
		h = crypto.SHA256
	case "384":
		h = crypto.SHA384
	default:
		h = crypto.SHA512
	}
	d := h.New()
	d.Write(input)
	digest := d.Sum(nil)
	switch {
	case alg[:2] == "PS":
		return k.Private.Sign(rand.Reader, digest, &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash, Hash: h})
	case alg[:2] == "ES":
		priv, ok := k.Private.(*ecdsa.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("oidctest: %s needs an EC key", alg)
		}
		r, s, err := ecdsa.Sign(rand.Reader, priv, digest)
		if err != nil {
			return nil, fmt.Errorf("oidctest: sign: %w", err)
		}
		size := (priv.Curve.Params().BitSize + 7) / 8
		sig := make([]byte, 2*size)
		r.FillBytes(sig[:size])
		s.FillBytes(sig[size:])
		return sig, nil
	default:
		return k.Private.Sign(rand.Reader, digest, h)
	}
}
