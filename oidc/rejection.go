package oidc

import (
	"errors"
	"fmt"
	"time"

	"github.com/cozystack/tenantkit/oidc/internal/jose"
)

// Why a token was rejected. Verifier.Verify wraps one of these in every
// rejection (kube-apiserver answers 401 for all of them and only logs the
// reason); the *XError types below carry the details.
var (
	// ErrMalformedToken is returned when a token is not a compact JWS with
	// a JSON object as payload, or has a JOSE header go-jose v2 refuses (a
	// duplicate member, a kid that is not a string ...).
	ErrMalformedToken = errors.New("oidc: malformed token")
	// ErrTokenTooLarge is returned when a token is longer than
	// VerifierConfig.MaxTokenBytes.
	ErrTokenTooLarge = errors.New("oidc: token too large")
	// ErrUnsupportedAlgorithm is returned when a token is signed with an
	// algorithm the apiserver does not accept (none, HS256, EdDSA, ...) or
	// has no alg header.
	ErrUnsupportedAlgorithm = errors.New("oidc: unsupported signing algorithm")
	// ErrIssuerMismatch is returned when a token's iss is not exactly the
	// configured issuer.
	ErrIssuerMismatch = errors.New("oidc: issuer mismatch")
	// ErrUnknownKey is returned when no key of the issuer has the token's
	// key ID (no key at all, for a token without one).
	ErrUnknownKey = errors.New("oidc: unknown signing key")
	// ErrInvalidSignature is returned when a token's signature does not
	// verify with the issuer's keys that could verify it.
	ErrInvalidSignature = errors.New("oidc: invalid signature")
	// ErrAudienceMismatch is returned when none of a token's audiences is
	// configured.
	ErrAudienceMismatch = errors.New("oidc: audience mismatch")
	// ErrExpired is returned when a token's exp is missing or past.
	ErrExpired = errors.New("oidc: token expired")
	// ErrNotYetValid is returned when a token's nbf is further in the
	// future than the leeway.
	ErrNotYetValid = errors.New("oidc: token not yet valid")
	// ErrEmailNotVerified is returned when the username claim is email and
	// email_verified is present and not true.
	ErrEmailNotVerified = errors.New("oidc: email not verified")
	// ErrClaim is returned when a claim the mapping or go-oidc needs is
	// missing or has the wrong type.
	ErrClaim = errors.New("oidc: bad claim")
	// ErrRuleFailed is returned when a claim or user validation rule
	// evaluates to false, or a CEL mapping fails.
	ErrRuleFailed = errors.New("oidc: validation rule failed")
	// ErrKeysUnavailable is returned when the issuer's keys could not be
	// fetched (or did not decode, see ErrInvalidKeySet) when a token
	// needed them.
	ErrKeysUnavailable = errors.New("oidc: signing keys unavailable")
	// ErrDistributedClaims is returned when the groups claim is only
	// available from a distributed claims endpoint (OIDC Core 5.6.2),
	// which this package does not fetch.
	ErrDistributedClaims = errors.New("oidc: distributed claims are not supported")
	// ErrCriticalHeader is returned when a token's crit header names an
	// extension other than b64 or is not a list of strings (RFC 7515
	// 4.1.11: the recipient must reject it). See *CriticalHeaderError.
	ErrCriticalHeader = errors.New("oidc: unsupported critical header")
	// ErrUnusableKey is returned when the issuer's keys a token names (by
	// kid, or all of them without one) cannot verify its algorithm at all:
	// an RSA key under 1024 bits (Go refuses it), a key of the other type,
	// a symmetric or a private key. See *UnusableKeyError.
	ErrUnusableKey = errors.New("oidc: unusable signing key")
	// ErrInvalidKeySet is returned, with ErrKeysUnavailable, when the
	// issuer's JWKS does not decode the way kube-apiserver 1.37 decodes
	// it: one bad entry fails the whole set there, and so here (see
	// VerifierConfig.SkipInvalidKeys). See *KeySetError.
	ErrInvalidKeySet = jose.ErrInvalidKeySet
	// ErrNotReady is returned while the verifier has not discovered its
	// issuer (down or unreachable); with VerifierConfig.BackgroundDiscovery
	// it keeps retrying. See *NotReadyError.
	ErrNotReady = errors.New("oidc: issuer not discovered yet")
)

// MalformedTokenError says why a token could not be parsed.
type MalformedTokenError struct {
	// Reason is what is wrong, for example "payload is not base64url".
	Reason string
}

func (e *MalformedTokenError) Error() string { return "oidc: malformed token: " + e.Reason }

// Unwrap returns ErrMalformedToken.
func (e *MalformedTokenError) Unwrap() error { return ErrMalformedToken }

// AlgorithmError is a token signed with an algorithm that is not accepted.
type AlgorithmError struct {
	// Algorithm is the token's alg header ("" when it has none).
	Algorithm string
}

func (e *AlgorithmError) Error() string {
	if e.Algorithm == "" {
		return "oidc: token has no alg header; accepted: RS256/384/512, ES256/384/512, PS256/384/512"
	}
	return fmt.Sprintf("oidc: token signed with %q; accepted: RS256/384/512, ES256/384/512, PS256/384/512", e.Algorithm)
}

// Unwrap returns ErrUnsupportedAlgorithm.
func (e *AlgorithmError) Unwrap() error { return ErrUnsupportedAlgorithm }

// IssuerMismatchError is a token from another issuer. The comparison is
// exact: "https://idp/" does not match "https://idp".
type IssuerMismatchError struct {
	// Want is the configured issuer; Got the token's iss.
	Want, Got string
}

func (e *IssuerMismatchError) Error() string {
	return fmt.Sprintf("oidc: token issued by %q, want %q", e.Got, e.Want)
}

// Unwrap returns ErrIssuerMismatch.
func (e *IssuerMismatchError) Unwrap() error { return ErrIssuerMismatch }

// UnknownKeyError is a token whose key ID is not among the issuer's keys
// (after a refetch, when the refresh mode allowed one).
type UnknownKeyError struct {
	// KeyID is the token's kid header ("" when it has none).
	KeyID string
}

func (e *UnknownKeyError) Error() string {
	return fmt.Sprintf("oidc: no signing key with kid %q", e.KeyID)
}

// Unwrap returns ErrUnknownKey.
func (e *UnknownKeyError) Unwrap() error { return ErrUnknownKey }

// AudienceError is a token minted for another audience: typically a token
// for cluster A presented to cluster B.
type AudienceError struct {
	// Want are the configured audiences (any one suffices).
	Want []string
	// Got is the token's aud claim.
	Got []string
}

func (e *AudienceError) Error() string {
	return fmt.Sprintf("oidc: token audience %q, want one of %q", e.Got, e.Want)
}

// Unwrap returns ErrAudienceMismatch.
func (e *AudienceError) Unwrap() error { return ErrAudienceMismatch }

// ExpiredError is a token past its exp (or without one).
type ExpiredError struct {
	// Expiry is the exp claim; the zero time when it is missing.
	Expiry time.Time
	// Now is the verifier's clock at the check.
	Now time.Time
}

func (e *ExpiredError) Error() string {
	if e.Expiry.IsZero() {
		return "oidc: token has no exp claim"
	}
	return fmt.Sprintf("oidc: token expired at %s (now %s)", e.Expiry.UTC().Format(time.RFC3339), e.Now.UTC().Format(time.RFC3339))
}

// Unwrap returns ErrExpired.
func (e *ExpiredError) Unwrap() error { return ErrExpired }

// NotYetValidError is a token whose nbf is later than now plus the leeway.
type NotYetValidError struct {
	// NotBefore is the token's nbf; Now the verifier's clock.
	NotBefore, Now time.Time
	// Leeway is the skew allowed (VerifierConfig.NotBeforeLeeway).
	Leeway time.Duration
}

func (e *NotYetValidError) Error() string {
	return fmt.Sprintf("oidc: token not valid before %s (now %s, leeway %s)",
		e.NotBefore.UTC().Format(time.RFC3339), e.Now.UTC().Format(time.RFC3339), e.Leeway)
}

// Unwrap returns ErrNotYetValid.
func (e *NotYetValidError) Unwrap() error { return ErrNotYetValid }

// ClaimError is a claim the configuration needs that is missing, has the
// wrong type or the wrong value.
type ClaimError struct {
	// Claim is the claim's name, for example "email" or "groups".
	Claim string
	// Problem says what is wrong, for example "missing" or "not a string".
	Problem string
}

func (e *ClaimError) Error() string { return fmt.Sprintf("oidc: claim %q: %s", e.Claim, e.Problem) }

// Unwrap returns ErrClaim.
func (e *ClaimError) Unwrap() error { return ErrClaim }

// RuleError is a CEL rule or mapping of the configuration that rejected the
// token.
type RuleError struct {
	// Field is where the expression sits, for example
	// "claimValidationRules" or "claimMappings.username".
	Field string
	// Expression is the CEL expression.
	Expression string
	// Message is the rule's message, or what went wrong evaluating it.
	Message string
}

func (e *RuleError) Error() string {
	if e.Expression == "" {
		return fmt.Sprintf("oidc: %s: %s", e.Field, e.Message)
	}
	return fmt.Sprintf("oidc: %s: expression '%s' failed: %s", e.Field, e.Expression, e.Message)
}

// Unwrap returns ErrRuleFailed.
func (e *RuleError) Unwrap() error { return ErrRuleFailed }

// CriticalHeaderError is a token whose crit header the verifier does not
// understand, as go-jose (and so kube-apiserver) refuses it.
type CriticalHeaderError struct {
	// Names are the crit entries other than b64 (empty when crit is not a
	// list of strings).
	Names []string
}

func (e *CriticalHeaderError) Error() string {
	if len(e.Names) == 0 {
		return "oidc: token's crit header is not a list of strings"
	}
	return fmt.Sprintf("oidc: token marks unsupported headers critical: %q", e.Names)
}

// Unwrap returns ErrCriticalHeader.
func (e *CriticalHeaderError) Unwrap() error { return ErrCriticalHeader }

// UnusableKeyError is a token whose key exists in the issuer's JWKS but
// cannot verify the token's algorithm.
type UnusableKeyError struct {
	// KeyID is the token's kid header ("" when it has none).
	KeyID string
	// Problem says why, for example "RSA key of 512 bits: Go refuses RSA
	// keys under 1024 bits".
	Problem string
}

func (e *UnusableKeyError) Error() string {
	return fmt.Sprintf("oidc: signing key %q cannot verify the token: %s", e.KeyID, e.Problem)
}

// Unwrap returns ErrUnusableKey.
func (e *UnusableKeyError) Unwrap() error { return ErrUnusableKey }

// KeySetError is a JWKS entry that kube-apiserver 1.37's decoder (go-jose
// v2) refuses, failing the whole set. Its fields:
//
//   - Index int: the entry's position in "keys" (-1 when the document
//     itself is wrong);
//   - KeyID string: the entry's kid, when it has a readable one;
//   - Problem string: what is wrong, for example "unknown kty \"OKP\"
//     curve \"X25519\"".
//
// It unwraps to ErrInvalidKeySet. The JWKS decoder (oidc/internal/jose)
// defines it and returns it as is.
type KeySetError = jose.KeySetError

// NotReadyError is returned by Verify until the issuer's discovery
// document has been read.
type NotReadyError struct {
	// Issuer is the configured issuer URL.
	Issuer string
	// Err is the last discovery failure.
	Err error
}

func (e *NotReadyError) Error() string {
	if e.Err == nil || e.Err == ErrNotReady {
		return fmt.Sprintf("oidc: issuer %s not discovered yet", e.Issuer)
	}
	return fmt.Sprintf("oidc: issuer %s not discovered yet: %s", e.Issuer, e.Err.Error())
}

// Unwrap returns ErrNotReady and the last discovery failure.
func (e *NotReadyError) Unwrap() []error { return []error{ErrNotReady, e.Err} }
