package extender

import (
	"errors"
	"fmt"
)

var (
	// ErrBadRequest is wrapped by every *RequestError: a request body the
	// extender cannot use.
	ErrBadRequest = errors.New("bad extender request")
	// ErrInsecure: plain HTTP was asked for on an address that is not
	// loopback; set Config.CertFile and Config.KeyFile.
	ErrInsecure = errors.New("plain HTTP outside loopback")
	// ErrInvalidConfig: a Config field is out of range.
	ErrInvalidConfig = errors.New("invalid extender config")
	// ErrNotStarted: Start has not synced the ledger yet.
	ErrNotStarted = errors.New("extender not started")
)

// RequestError reports a request body the extender refuses (answered 400).
// It wraps ErrBadRequest.
type RequestError struct {
	// Verb is "filter", "prioritize" or "bind".
	Verb string
	// Reason says what is wrong, e.g. "no Pod".
	Reason string
	// Err is the decoder's error, if any.
	Err error
}

// Error reads "extender filter: no Pod" or "extender bind: decode: …".
func (e *RequestError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("extender %s: %s: %v", e.Verb, e.Reason, e.Err)
	}
	return fmt.Sprintf("extender %s: %s", e.Verb, e.Reason)
}

// Unwrap returns ErrBadRequest and the decoder's error.
func (e *RequestError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrBadRequest, e.Err}
	}
	return []error{ErrBadRequest}
}
