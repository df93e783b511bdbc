//go:build tools

// Package tools pins velero-plugin-for-aws v1.14.3 in the velero module.
// The plugin's main package lives in the upstream module and is built from
// there with `go build github.com/vmware-tanzu/velero-plugin-for-aws/velero-plugin-for-aws`
// in the same invocation as ./cmd/velero (see internal/serverbin). Minimal
// version selection keeps the plugin's own aws-sdk-go-v2 pins (they decide
// how it talks to S3; they are newer than Velero's) and gives it Velero's
// versions of what the two share (Velero's plugin framework at v1.18.3,
// client-go, gRPC, go-plugin), so the plugin speaks the server's own plugin
// protocol and its shared packages compile once.
package tools

import _ "github.com/vmware-tanzu/velero-plugin-for-aws/velero-plugin-for-aws"
