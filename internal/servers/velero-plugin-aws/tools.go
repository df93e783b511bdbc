//go:build tools

// Package tools pins velero-plugin-for-aws in this module. The plugin's main
// package lives in the upstream module and is built from there with
// `go build github.com/vmware-tanzu/velero-plugin-for-aws/velero-plugin-for-aws`
// (see internal/serverbin), keeping the plugin's own dependency versions
// (its aws-sdk-go-v2 pins decide how it talks to S3).
package tools

import _ "github.com/vmware-tanzu/velero-plugin-for-aws/velero-plugin-for-aws"
