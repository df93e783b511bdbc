package ref

import "errors"

// ErrInvalidName is returned for a tenant, cluster or namespace name that
// Cozystack cannot use: not a tenant namespace, not a DNS label, or too long
// for the names derived from it.
var ErrInvalidName = errors.New("ref: invalid name")
