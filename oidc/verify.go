package oidc

import (
	"context"
	"fmt"
	"slices"
	"time"

	"k8s.io/apiserver/pkg/cel/lazy"
)

// The verification pipeline, top-down: verify runs every stage in
// kube-apiserver 1.37's order, each a call that passes the token on or
// returns the typed reason it stops it. The stages below verify are the
// apiserver's own checks; parsing is in scan.go and claims.go, keys and
// signatures in keys.go and signature.go, the user in mapping.go, the
// rules in gate.go and cel.go.

// Verify checks a token the way the apiserver does and maps it to a user:
// untrusted issuer routing, JOSE header and algorithm, signature, the
// go-oidc claims (iss, aud, exp, nbf ...), the username claim (with the
// email_verified rule), groups, uid, extra, required claims, claim
// validation rules and user validation rules. A rejection wraps one of the
// ErrX reasons in rejection.go; it never contains the token. With the
// token cache on, a token verified before is answered from the cache.
func (v *Verifier) Verify(ctx context.Context, token string) (*UserInfo, error) {
	if len(token) > v.cfg.MaxTokenBytes {
		return nil, fmt.Errorf("%w: %d bytes, limit %d", ErrTokenTooLarge, len(token), v.cfg.MaxTokenBytes)
	}
	if v.cache == nil {
		u, _, err := v.verify(ctx, token)
		return u, err
	}
	key := cacheKey(token)
	now := v.now()
	u, gen := v.cache.get(key, now)
	if u != nil {
		return u, nil
	}
	u, exp, err := v.verify(ctx, token)
	if err == nil {
		v.cache.put(key, u, exp, now, gen)
	}
	return u, err
}

// verify is the pipeline: Verify without the size bound and the cache.
// The time is the token's expiry, for the cache.
func (v *Verifier) verify(ctx context.Context, token string) (*UserInfo, time.Time, error) {
	// Parse: a compact JWS whose payload is a JSON object, scanned once.
	payload, scan, err := splitToken(token)
	if err != nil {
		return nil, time.Time{}, err
	}
	// Route: the apiserver picks the authenticator by the unverified iss.
	if err := v.checkUntrustedIssuer(scan, payload); err != nil {
		return nil, time.Time{}, err
	}
	// Keys: none until the issuer is discovered (a *NotReadyError).
	keys, err := v.discoveredKeys()
	if err != nil {
		return nil, time.Time{}, err
	}
	// JOSE header and algorithm, as go-jose v2 and go-oidc v2 read them.
	jws, err := parseJWS(token, payload, &v.headers)
	if err != nil {
		return nil, time.Time{}, err
	}
	// Key lookup by kid and signature, refetching keys as KeyRefresh says.
	if err := keys.verify(ctx, jws); err != nil {
		return nil, time.Time{}, err
	}
	// Claims, as go-oidc v2 checks them: decoded with its types (a bad iat
	// fails here; iat is never compared), then distributed claim sources,
	// iss, and aud, exp and nbf.
	f, err := decodeOIDCFields(scan, payload)
	if err != nil {
		return nil, time.Time{}, err
	}
	if err := f.checkClaimSources(); err != nil {
		return nil, time.Time{}, err
	}
	if err := v.checkIssuer(f.Issuer); err != nil {
		return nil, time.Time{}, err
	}
	if err := v.checkAudienceAndTimes(f); err != nil {
		return nil, time.Time{}, err
	}
	// The user: distributed groups refused, then username, groups, uid and
	// extra, each by claim or CEL mapping.
	c, cv := scan.claims, v.celClaims(scan.claims)
	u, groupsClaim, err := v.mapUser(ctx, c, cv)
	if err != nil {
		return nil, time.Time{}, err
	}
	// claimValidationRules: required claims, then the tenant gate or CEL.
	if err := v.checkRequiredClaims(c); err != nil {
		return nil, time.Time{}, err
	}
	if err := v.checkClaimRules(ctx, c, cv, groupsClaim); err != nil {
		return nil, time.Time{}, err
	}
	// userValidationRules, over the mapped user.
	if err := v.checkUserRules(ctx, u); err != nil {
		return nil, time.Time{}, err
	}
	return u, time.Time(f.Expiry), nil
}

// checkUntrustedIssuer routes a token by its iss before any verification,
// as the apiserver does: a token from another issuer goes no further.
func (v *Verifier) checkUntrustedIssuer(scan *payloadScan, payload []byte) error {
	iss, err := untrustedIssuer(scan, payload)
	if err != nil {
		return err
	}
	if iss != v.jwt.Issuer.URL {
		return &IssuerMismatchError{Want: v.jwt.Issuer.URL, Got: iss}
	}
	return nil
}

// discoveredKeys returns the issuer's key cache, or Ready's
// *NotReadyError before the issuer has been discovered.
func (v *Verifier) discoveredKeys() (*keySet, error) {
	if keys := v.keys.Load(); keys != nil {
		return keys, nil
	}
	return nil, v.Ready()
}

// checkIssuer is go-oidc v2's iss check after the signature: exact, but
// for Google's legacy issuer (googleIssuer).
func (v *Verifier) checkIssuer(iss string) error {
	want := v.jwt.Issuer.URL
	if iss != want && !(want == "https://"+googleIssuer && iss == googleIssuer) {
		return &IssuerMismatchError{Want: want, Got: iss}
	}
	return nil
}

// checkAudienceAndTimes checks aud, exp (no leeway) and nbf (with
// NotBeforeLeeway) in the apiserver's order: with one audience configured
// go-oidc v2 checks it before the times; with several the apiserver checks
// it itself, after them.
func (v *Verifier) checkAudienceAndTimes(f *oidcFields) error {
	single := len(v.jwt.Issuer.Audiences) == 1
	if single {
		if err := v.checkAudience(f.Audience); err != nil {
			return err
		}
	}
	now := v.now()
	if exp := time.Time(f.Expiry); exp.Before(now) { // a missing exp is the zero time
		return &ExpiredError{Expiry: exp, Now: now}
	}
	if f.NotBefore != nil {
		if nbf := time.Time(*f.NotBefore); now.Add(v.cfg.NotBeforeLeeway).Before(nbf) {
			return &NotYetValidError{NotBefore: nbf, Now: now, Leeway: v.cfg.NotBeforeLeeway}
		}
	}
	if !single {
		return v.checkAudience(f.Audience)
	}
	return nil
}

// checkAudience passes when one of the token's audiences is configured.
func (v *Verifier) checkAudience(got audience) error {
	for _, a := range got {
		if slices.Contains(v.jwt.Issuer.Audiences, a) {
			return nil
		}
	}
	return &AudienceError{Want: v.jwt.Issuer.Audiences, Got: []string(got)}
}

// checkRequiredClaims is the claimValidationRules with claim and
// requiredValue: each claim a string of exactly that value.
func (v *Verifier) checkRequiredClaims(c claims) error {
	for name, want := range v.required {
		var got string
		if err := c.decode(name, &got, "a string"); err != nil {
			return err
		}
		if got != want {
			return &ClaimError{Claim: name, Problem: fmt.Sprintf("is %q, required %q", got, want)}
		}
	}
	return nil
}

// checkClaimRules is the claimValidationRules with an expression: the
// tenant groups gates when every rule is one (natively, over the groups
// claim the mapping decoded), else the CEL rules, first failure wins.
func (v *Verifier) checkClaimRules(ctx context.Context, c claims, cv *lazy.MapValue, groupsClaim []string) error {
	for _, g := range v.gates {
		if err := g.check(c, groupsClaim); err != nil {
			return err
		}
	}
	if v.mapper.ClaimValidationRules == nil || v.gates != nil {
		return nil
	}
	res, err := v.mapper.ClaimValidationRules.EvalClaimMappings(ctx, cv)
	if err != nil {
		return &RuleError{Field: "claimValidationRules", Message: err.Error()}
	}
	return checkRules(res, "claimValidationRules")
}

// checkUserRules is the userValidationRules, evaluated over the mapped
// user; first failure wins.
func (v *Verifier) checkUserRules(ctx context.Context, u *UserInfo) error {
	if v.mapper.UserValidationRules == nil {
		return nil
	}
	res, err := v.mapper.UserValidationRules.EvalUser(ctx, userValue(u))
	if err != nil {
		return &RuleError{Field: "userValidationRules", Message: err.Error()}
	}
	return checkRules(res, "userValidationRules")
}
