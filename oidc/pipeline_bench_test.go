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
		if err := verifyWithoutSignature(ctx, v, token); err != nil {
			b.Fatal(err)
		}
	}
}

// verifyWithoutSignature is Verifier.verify's stages but for the key
// lookup and signature check (the digest is computed, not verified).
func verifyWithoutSignature(ctx context.Context, v *Verifier, token string) error {
	payload, scan, err := splitToken(token)
	if err != nil {
		return err
	}
	if err := v.checkUntrustedIssuer(scan, payload); err != nil {
		return err
	}
	t, err := parseJWS(token, payload, &v.headers)
	if err != nil {
		return err
	}
	_ = jose.Digest(t.Alg, t.SigningInput)
	f, err := decodeOIDCFields(scan, payload)
	if err != nil {
		return err
	}
	if err := f.checkClaimSources(); err != nil {
		return err
	}
	if err := v.checkIssuer(f.Issuer); err != nil {
		return err
	}
	if err := v.checkAudienceAndTimes(f); err != nil {
		return err
	}
	c, cv := scan.claims, v.celClaims(scan.claims)
	u, groupsClaim, err := v.mapUser(ctx, c, cv)
	if err != nil {
		return err
	}
	if err := v.checkRequiredClaims(c); err != nil {
		return err
	}
	if err := v.checkClaimRules(ctx, c, cv, groupsClaim); err != nil {
		return err
	}
	return v.checkUserRules(ctx, u)
}
