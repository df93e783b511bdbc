package oidc

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"testing"
	"time"

	gojose "github.com/go-jose/go-jose/v4"

	"github.com/cozystack/tenantkit/oidc/internal/jose"
	"github.com/cozystack/tenantkit/ref"
)

// BenchmarkVerifyOverhead is Verify without the signature check: what
// this package adds to the crypto (see oidc/internal/apiserverauthn for
// the comparison with the apiserver).
func BenchmarkVerifyOverhead(b *testing.B) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	c := ref.Cluster{Namespace: "tenant-acme", Name: "prod"}
	const issuer = "https://idp.example.org"
	v, err := NewVerifier(context.Background(), VerifierConfig{JWT: JWTAuthenticator(c, issuer, nil), Keys: []PublicKey{{ID: "k", Key: priv.Public()}}})
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now()
	payload, _ := json.Marshal(map[string]any{"iss": issuer, "aud": c.ClientID(), "sub": "sub-alice", "email": "alice@example.org",
		"email_verified": true, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix(), "groups": []string{"tenant-acme-admin", "devs"}})
	signer, err := gojose.NewSigner(gojose.SigningKey{Algorithm: gojose.ES256, Key: gojose.JSONWebKey{Key: priv, KeyID: "k"}},
		(&gojose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		b.Fatal(err)
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		b.Fatal(err)
	}
	token, err := jws.CompactSerialize()
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		payload, scan, err := splitToken(token)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := untrustedIssuer(scan, payload); err != nil {
			b.Fatal(err)
		}
		t, err := parseJWS(token, payload, &v.headers)
		if err != nil {
			b.Fatal(err)
		}
		_ = jose.Digest(t.Alg, t.SigningInput)
		f, err := decodeOIDCFields(scan, payload)
		if err != nil {
			b.Fatal(err)
		}
		if err := v.checkOIDC(f); err != nil {
			b.Fatal(err)
		}
		if _, err := v.mapUser(ctx, scan.claims); err != nil {
			b.Fatal(err)
		}
	}
}
