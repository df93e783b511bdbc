package localvolume

import "errors"

// ErrInvalidConfig is returned by Start for a configuration that cannot work.
var ErrInvalidConfig = errors.New("localvolume: invalid config")
