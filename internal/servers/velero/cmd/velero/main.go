// Command velero is the upstream Velero v1.18.3 command (server, CLI and the
// built-in plugins), built for tenantkit's local environment, which runs
// `velero server` out of cluster against a local kube-apiserver.
//
// One change from upstream's main: the controller-runtime metrics listener,
// which Velero leaves at its default ":8080" on every interface, is off
// unless VELERO_CONTROLLER_METRICS_ADDRESS sets an address. Velero's own
// metrics (--metrics-address) are unaffected. Without this, two Velero
// servers (two clusters) cannot run on one machine.
package main

import (
	"os"
	"path/filepath"

	"k8s.io/klog/v2"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/vmware-tanzu/velero/pkg/cmd"
	"github.com/vmware-tanzu/velero/pkg/cmd/velero"
)

func main() {
	defer klog.Flush()
	metricsserver.DefaultBindAddress = "0"
	if addr := os.Getenv("VELERO_CONTROLLER_METRICS_ADDRESS"); addr != "" {
		metricsserver.DefaultBindAddress = addr
	}
	err := velero.NewCommand(filepath.Base(os.Args[0])).Execute()
	cmd.CheckError(err)
}
