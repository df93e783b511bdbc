package oidctest

import (
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
	jwk := jose.JSONWebKey{Key: k.Private, KeyID: k.ID, Algorithm: string(k.Algorithm)}
	opts := (&jose.SignerOptions{}).WithType("JWT")
	for name, v := range headers {
		opts = opts.WithHeader(jose.HeaderKey(name), v)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: k.Algorithm, Key: jwk}, opts)
	if err != nil {
		return "", fmt.Errorf("oidctest: new signer: %w", err)
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		return "", fmt.Errorf("oidctest: sign: %w", err)
	}
	return jws.CompactSerialize()
}

// SignWith is k.Sign for tests: it fails the test on error.
func SignWith(t testing.TB, k Key, claims map[string]any) string {
	t.Helper()
	tok, err := k.Sign(claims)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// SignPayload is k.SignPayload for tests: it fails the test on error.
func SignPayload(t testing.TB, k Key, payload []byte) string {
	t.Helper()
	tok, err := k.SignPayload(payload)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// SignHMAC signs claims with HS256 and secret: the key-confusion attack
// when secret is the issuer's public key.
func SignHMAC(t testing.TB, secret []byte, claims map[string]any) string {
	t.Helper()
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatalf("oidctest: marshal claims: %v", err)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: secret}, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		t.Fatalf("oidctest: new signer: %v", err)
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		t.Fatalf("oidctest: sign: %v", err)
	}
	out, err := jws.CompactSerialize()
	if err != nil {
		t.Fatalf("oidctest: serialize: %v", err)
	}
	return out
}

// Unsigned returns an alg "none" token with an empty signature.
func Unsigned(t testing.TB, claims map[string]any) string {
	t.Helper()
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatalf("oidctest: marshal claims: %v", err)
	}
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + enc.EncodeToString(payload) + "."
}
