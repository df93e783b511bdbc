//go:build tools

// Package tools pins the volume provisioner of tenantkit's kind node image:
// rancher/local-path-provisioner v0.0.30 (kind ships a build of the same
// project), built from its upstream main package (see internal/serverbin)
// with its own dependency versions.
package tools

import _ "github.com/rancher/local-path-provisioner"
