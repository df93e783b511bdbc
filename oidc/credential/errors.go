package credential

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Sentinel errors. Every error Get, Logout and the sign-ins return wraps
// at most one of them; the *XError types carry the details. No error
// contains a token.
var (
	// ErrInvalidConfig: the Config is incomplete or contradicts itself, or
	// the issuer lacks an endpoint the chosen grant needs.
	ErrInvalidConfig = errors.New("credential: invalid configuration")
	// ErrIssuerUnreachable: discovery or a token request did not get an
	// answer from the issuer ([*IssuerError]).
	ErrIssuerUnreachable = errors.New("credential: issuer unreachable")
	// ErrAudienceMismatch: the issuer returned an ID token for another
	// audience than the cluster's client ID ([*AudienceError]).
	ErrAudienceMismatch = errors.New("credential: ID token for another audience")
	// ErrTokenInvalid: the issuer returned an ID token that fails
	// verification (signature, issuer, expiry, nonce).
	ErrTokenInvalid = errors.New("credential: invalid ID token")
	// ErrClockSkew: a token the issuer has just issued is expired or not
	// yet valid by this machine's clock ([*ClockSkewError]).
	ErrClockSkew = errors.New("credential: clock skew with the issuer")
	// ErrRefreshRejected: the issuer refused the cached refresh token,
	// because it expired or was revoked ([*RefreshError]). Get signs in
	// again; the error surfaces, joined with the sign-in's, only when that
	// sign-in fails.
	ErrRefreshRejected = errors.New("credential: refresh token rejected")
	// ErrPortInUse: none of the loopback redirect ports could be bound
	// ([*PortError]).
	ErrPortInUse = errors.New("credential: redirect ports in use")
	// ErrIssuerFailed: the issuer answered, but with an error status or a
	// document that could not be read ([*IssuerError] with Answered set):
	// it is up, and misconfigured or failing.
	ErrIssuerFailed = errors.New("credential: issuer answered with an error")
	// ErrInterrupted: the caller cancelled the context (Ctrl-C) before the
	// user finished the sign-in. It does not count as a failed sign-in.
	ErrInterrupted = errors.New("credential: sign-in interrupted")
	// ErrSignInTimeout: the user did not finish the sign-in within
	// Config.SignInTimeout. It counts as a failed sign-in.
	ErrSignInTimeout = errors.New("credential: sign-in timed out")
	// ErrInteractionRequired: Config.NonInteractive is set and neither the
	// cache nor a refresh gave a token, so a sign-in would be needed.
	ErrInteractionRequired = errors.New("credential: sign-in needed, but the caller is not interactive")
	// ErrSignInDenied: the issuer answered the sign-in with an error
	// (access_denied, expired device code, ...).
	ErrSignInDenied = errors.New("credential: sign-in denied")
	// ErrSignInBackoff: too many sign-ins failed in a row; Get refuses to
	// start another before RetryAfter ([*BackoffError]).
	ErrSignInBackoff = errors.New("credential: too many failed sign-ins, backing off")
	// ErrCacheInsecure: the cache directory belongs to another user or is
	// not a directory.
	ErrCacheInsecure = errors.New("credential: cache directory not private")
)

// IssuerError is a failure to reach the issuer or read its answer.
type IssuerError struct {
	// URL is the issuer URL.
	URL string
	// Op is what was attempted: "discovery", "refresh", "token", "revoke".
	Op string
	// Answered reports that the issuer answered (an HTTP error status, a
	// document that could not be read) rather than not at all.
	Answered bool
	// Err is the underlying error.
	Err error
}

func (e *IssuerError) Error() string {
	if e.Answered {
		return fmt.Sprintf("credential: issuer %s: %s: answered with an error: %v", e.URL, e.Op, e.Err)
	}
	return fmt.Sprintf("credential: issuer %s: %s: %v", e.URL, e.Op, e.Err)
}

// Unwrap returns ErrIssuerFailed when the issuer answered, else
// ErrIssuerUnreachable, and the underlying error.
func (e *IssuerError) Unwrap() []error {
	if e.Answered {
		return []error{ErrIssuerFailed, e.Err}
	}
	return []error{ErrIssuerUnreachable, e.Err}
}

// newIssuerError classifies err of a request to the issuer: an error of
// the HTTP transport (*url.Error: refused, reset, timed out, TLS) is
// unreachable; anything else came after an answer.
func newIssuerError(issuerURL, op string, err error) *IssuerError {
	var ue *url.Error
	return &IssuerError{URL: issuerURL, Op: op, Err: err, Answered: !errors.As(err, &ue)}
}

// AudienceError is an ID token whose aud lacks the client ID.
type AudienceError struct {
	// Want is the client ID (the cluster's audience).
	Want string
	// Got is the token's aud.
	Got []string
}

func (e *AudienceError) Error() string {
	return fmt.Sprintf("credential: ID token audience [%s], want %s", strings.Join(e.Got, " "), e.Want)
}

// Unwrap returns ErrAudienceMismatch.
func (e *AudienceError) Unwrap() error { return ErrAudienceMismatch }

// ClockSkewError is a freshly issued token this machine's clock calls
// expired or not yet valid.
type ClockSkewError struct {
	// Now is this machine's time.
	Now time.Time
	// IssuedAt and Expiry are the token's iat and exp.
	IssuedAt, Expiry time.Time
}

func (e *ClockSkewError) Error() string {
	return fmt.Sprintf("credential: token issued at %s, valid until %s, but the local clock says %s: check the clock",
		e.IssuedAt.UTC().Format(time.RFC3339), e.Expiry.UTC().Format(time.RFC3339), e.Now.UTC().Format(time.RFC3339))
}

// Unwrap returns ErrClockSkew.
func (e *ClockSkewError) Unwrap() error { return ErrClockSkew }

// RefreshError is the issuer's refusal of a refresh token.
type RefreshError struct {
	// Code is the OAuth error code, usually invalid_grant.
	Code string
	// Description is the issuer's error_description.
	Description string
}

func (e *RefreshError) Error() string {
	return fmt.Sprintf("credential: refresh token rejected: %s %s", e.Code, e.Description)
}

// Unwrap returns ErrRefreshRejected.
func (e *RefreshError) Unwrap() error { return ErrRefreshRejected }

// PortError is a sign-in that found every redirect port taken.
type PortError struct {
	// Ports are the ports tried, in order.
	Ports []int
	// Err is the error of the last port.
	Err error
}

func (e *PortError) Error() string {
	return fmt.Sprintf("credential: loopback redirect ports %v in use (another sign-in or program holds them): %v", e.Ports, e.Err)
}

// Unwrap returns ErrPortInUse.
func (e *PortError) Unwrap() error { return ErrPortInUse }

// BackoffError is a sign-in refused because the previous ones failed.
type BackoffError struct {
	// Failures is the number of sign-ins that failed in a row.
	Failures int
	// RetryAfter is when Get will try again.
	RetryAfter time.Time
}

func (e *BackoffError) Error() string {
	return fmt.Sprintf("credential: %d sign-ins failed in a row; not starting another before %s (run logout to reset)",
		e.Failures, e.RetryAfter.UTC().Format(time.RFC3339))
}

// Unwrap returns ErrSignInBackoff.
func (e *BackoffError) Unwrap() error { return ErrSignInBackoff }

// SignInError is an error the issuer returned to a sign-in.
type SignInError struct {
	// Code is the OAuth error code (access_denied, expired_token, ...).
	Code string
	// Description is the issuer's error_description.
	Description string
}

func (e *SignInError) Error() string {
	return fmt.Sprintf("credential: sign-in refused by the issuer: %s %s", e.Code, e.Description)
}

// Unwrap returns ErrSignInDenied.
func (e *SignInError) Unwrap() error { return ErrSignInDenied }

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidConfig}, args...)...)
}
