// Command kubelet is the upstream Kubernetes node agent, built from
// k8s.io/kubernetes at the version pinned in this module for tenantkit's local
// environment. It mirrors upstream's cmd/kubelet/kubelet.go, blank imports
// included.
package main

import (
	"context"
	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"          // for JSON log format registration
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // for client metric registration
	_ "k8s.io/component-base/metrics/prometheus/version"  // for version metric registration
	"k8s.io/kubernetes/cmd/kubelet/app"
)

func main() {
	os.Exit(cli.Run(app.NewKubeletCommand(context.Background())))
}
