// Command coredns is CoreDNS v1.14.6 (the version kubeadm v1.37.2 deploys)
// with the plugins kubeadm's Corefile names and a few for debugging, built
// for tenantkit's kind node image. Upstream's coredns.go imports every
// plugin (core/plugin); this main imports only these, as CoreDNS documents
// for custom builds, so that the image builds in a fraction of the time.
// The plugin order is upstream's (core/dnsserver.Directives).
package main

import (
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/hosts"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/loop"
	_ "github.com/coredns/coredns/plugin/metrics"
	_ "github.com/coredns/coredns/plugin/ready"
	_ "github.com/coredns/coredns/plugin/reload"
)

func main() { coremain.Run() }
