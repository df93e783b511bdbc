package clusterdns

import "errors"

var (
	// ErrInvalidConfig is returned by Start when a required field is missing.
	ErrInvalidConfig = errors.New("clusterdns: invalid config")
	// ErrMalformedQuery is returned for a message that is not a DNS query the
	// server can answer; the server drops such messages without a reply.
	ErrMalformedQuery = errors.New("clusterdns: malformed query")
)
