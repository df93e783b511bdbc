package live

import "errors"

var (
	// ErrNoClient is returned by Watch when the client is nil.
	ErrNoClient = errors.New("live: no Kubernetes client")

	// ErrAlreadyWatched is returned by Watch when another Watch still
	// feeds the same ledger.
	ErrAlreadyWatched = errors.New("live: ledger already watched")
)
