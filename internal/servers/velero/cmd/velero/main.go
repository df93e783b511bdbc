// Command velero is the upstream Velero v1.18.3 command (server, CLI and the
// built-in plugins), built for tenantkit's local environment, which runs
// `velero server` out of cluster against a local kube-apiserver.
package main

import (
	"os"
	"path/filepath"

	"k8s.io/klog/v2"

	"github.com/vmware-tanzu/velero/pkg/cmd"
	"github.com/vmware-tanzu/velero/pkg/cmd/velero"
)

func main() {
	defer klog.Flush()
	err := velero.NewCommand(filepath.Base(os.Args[0])).Execute()
	cmd.CheckError(err)
}
