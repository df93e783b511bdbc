package etcdlayout

import "errors"

var (
	// ErrInvalidConfig is returned for a layout configuration that cannot
	// work, such as one without a tenant or namespace.
	ErrInvalidConfig = errors.New("etcdlayout: invalid config")
	// ErrBadSecret is returned when a TLS Secret does not hold a usable
	// certificate, key or CA.
	ErrBadSecret = errors.New("etcdlayout: bad TLS secret")
)
