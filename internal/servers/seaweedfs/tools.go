//go:build tools

// Package tools pins SeaweedFS (weed 4.53) in this module. The weed command
// lives in the upstream module and is built from there with
// `go build github.com/seaweedfs/seaweedfs/weed` (see internal/serverbin),
// keeping upstream's own dependency versions. It is an opt-in parity S3
// backend for the backup tests (`make test-seaweedfs`): `make tools` and CI
// do not build it.
package tools

import _ "github.com/seaweedfs/seaweedfs/weed"
