package localenv

import "errors"

var (
	// ErrInvalidConfig is returned by Start for a configuration that cannot
	// work, such as a negative number of etcd members.
	ErrInvalidConfig = errors.New("localenv: invalid config")
	// ErrPortInUse is returned when a port given in the configuration is
	// already taken.
	ErrPortInUse = errors.New("localenv: port in use")
	// ErrKindUnavailable is returned when the kind provider is selected but
	// no container engine answers here, or the kind node image is not in its
	// image store (Start never pulls one).
	ErrKindUnavailable = errors.New("localenv: kind unavailable")
	// ErrUnsupported is returned by operations the selected provider cannot
	// do, such as starting another apiserver on a kind cluster.
	ErrUnsupported = errors.New("localenv: not supported by this provider")
	// ErrStopped is returned by operations on an environment after Stop.
	ErrStopped = errors.New("localenv: environment stopped")
	// ErrIncompatibleBinary is returned when a binary named by Binaries or
	// an environment variable cannot run here: the file is missing or not
	// executable, or it reports another major version than the pinned one
	// or one older than the environment needs.
	ErrIncompatibleBinary = errors.New("localenv: incompatible binary")
)
