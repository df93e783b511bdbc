//go:build tools

// Package tools pins the CNI plugins of tenantkit's kind node image:
// containernetworking/plugins v1.10.0, the same four kind's base image
// ships (ptp, host-local, loopback, portmap), each built from its upstream
// main package (see internal/serverbin) into /opt/cni/bin.
package tools

import (
	_ "github.com/containernetworking/plugins/plugins/ipam/host-local"
	_ "github.com/containernetworking/plugins/plugins/main/loopback"
	_ "github.com/containernetworking/plugins/plugins/main/ptp"
	_ "github.com/containernetworking/plugins/plugins/meta/portmap"
)
