package credential

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	gooidc "github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// nbfLeeway is go-oidc's fixed leeway on nbf.
const nbfLeeway = 5 * time.Minute

// issuer is a discovered provider with the client's OAuth 2.0 setup.
type issuer struct {
	cfg      Config
	provider *gooidc.Provider
	oauth    *oauth2.Config
	// verifier checks signature, iss, exp and nbf (the audience and nonce
	// are checked by verify, to return typed errors); one key set, fetched
	// once per process.
	verifier *gooidc.IDTokenVerifier
	// revocation is the RFC 7009 endpoint, "" if the issuer offers none.
	revocation string
}

// discover reads the issuer's discovery document (go-oidc v3).
func discover(ctx context.Context, cfg Config) (*issuer, error) {
	ctx = gooidc.ClientContext(ctx, cfg.HTTPClient)
	p, err := gooidc.NewProvider(ctx, cfg.IssuerURL)
	if err != nil {
		var mismatch *gooidc.IssuerMismatchError
		if errors.As(err, &mismatch) {
			return nil, fmt.Errorf("%w: %v", ErrInvalidConfig, err)
		}
		return nil, newIssuerError(cfg.IssuerURL, "discovery", err)
	}
	var extra struct {
		Revocation string `json:"revocation_endpoint"`
	}
	_ = p.Claims(&extra)
	ep := p.Endpoint()
	ep.AuthStyle = oauth2.AuthStyleInParams // a public client: client_id in the form, no secret
	return &issuer{cfg: cfg, provider: p, revocation: extra.Revocation,
		verifier: p.VerifierContext(ctx, &gooidc.Config{SkipClientIDCheck: true, Now: cfg.Now}),
		oauth:    &oauth2.Config{ClientID: cfg.ClientID, Endpoint: ep, Scopes: cfg.scopes()}}, nil
}

// context returns ctx carrying the issuer's HTTP client for x/oauth2.
func (i *issuer) context(ctx context.Context) context.Context {
	return context.WithValue(ctx, oauth2.HTTPClient, i.cfg.HTTPClient)
}

// verify checks rawID as go-oidc does (signature against the issuer's
// keys, iss, exp, nbf), then the audience and, when nonce is set, the
// nonce. fresh says the token was issued just now, so that an expired or
// not yet valid token is the clock's fault (ErrClockSkew).
func (i *issuer) verify(ctx context.Context, rawID, nonce string, fresh bool) (*gooidc.IDToken, error) {
	tok, err := i.verifier.Verify(ctx, rawID)
	if err != nil {
		var expired *gooidc.TokenExpiredError
		switch {
		case fresh && (errors.As(err, &expired) || strings.Contains(err.Error(), "before the nbf")):
			return nil, i.skew(rawID)
		case errors.As(err, &expired):
			return nil, fmt.Errorf("%w: expired at %s", ErrTokenInvalid, expired.Expiry.UTC().Format(time.RFC3339))
		}
		return nil, fmt.Errorf("%w: %v", ErrTokenInvalid, err)
	}
	if !slices.Contains(tok.Audience, i.cfg.ClientID) {
		return nil, &AudienceError{Want: i.cfg.ClientID, Got: tok.Audience}
	}
	if nonce != "" && tok.Nonce != nonce {
		return nil, fmt.Errorf("%w: nonce does not match the sign-in's", ErrTokenInvalid)
	}
	if fresh && tok.IssuedAt.After(i.cfg.Now().Add(nbfLeeway)) {
		return nil, &ClockSkewError{Now: i.cfg.Now(), IssuedAt: tok.IssuedAt, Expiry: tok.Expiry}
	}
	return tok, nil
}

// skew reports a fresh token the local clock disagrees with; the times
// come from the token's payload, read after the signature was checked
// with expiry skipped.
func (i *issuer) skew(rawID string) error {
	ctx := gooidc.ClientContext(context.Background(), i.cfg.HTTPClient)
	v := i.provider.VerifierContext(ctx, &gooidc.Config{SkipClientIDCheck: true, SkipExpiryCheck: true, Now: i.cfg.Now})
	tok, err := v.Verify(ctx, rawID)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrTokenInvalid, err)
	}
	return &ClockSkewError{Now: i.cfg.Now(), IssuedAt: tok.IssuedAt, Expiry: tok.Expiry}
}

// tokenError classifies an error of a token request.
func (i *issuer) tokenError(op string, err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) && re.ErrorCode != "" {
		if op == "refresh" {
			return &RefreshError{Code: re.ErrorCode, Description: re.ErrorDescription}
		}
		return &SignInError{Code: re.ErrorCode, Description: re.ErrorDescription}
	}
	return newIssuerError(i.cfg.IssuerURL, op, err)
}
