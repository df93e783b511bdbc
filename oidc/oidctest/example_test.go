package oidctest_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cozystack/tenantkit/oidc"
	"github.com/cozystack/tenantkit/oidc/oidctest"
	"github.com/cozystack/tenantkit/ref"
)

// Mint the tokens a test needs, valid and not, and watch a Verifier refuse
// the bad ones for the right reason.
func ExampleIssuer() {
	iss, err := oidctest.Start(oidctest.Config{Algorithm: oidc.ES256})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer iss.Close()
	c := ref.Cluster{Namespace: "tenant-acme", Name: "prod"}
	v, err := oidc.NewVerifier(context.Background(), oidc.VerifierConfig{JWT: oidc.JWTAuthenticator(c, iss.URL(), iss.CAPEM())})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer v.Close()

	claims := iss.Claims(c.ClientID(), "alice@example.org", "tenant-acme-view")
	claims["exp"] = time.Now().Add(-time.Minute).Unix()
	expired, _ := iss.Key().Sign(claims)
	_, err = v.Verify(context.Background(), expired)
	fmt.Println(errors.Is(err, oidc.ErrExpired))

	stranger, _ := oidctest.GenerateKey(oidc.ES256) // not in the issuer's JWKS
	forged, _ := stranger.Sign(iss.Claims(c.ClientID(), "alice@example.org", "tenant-acme-view"))
	_, err = v.Verify(context.Background(), forged)
	fmt.Println(errors.Is(err, oidc.ErrUnknownKey))
	// Output:
	// true
	// true
}
