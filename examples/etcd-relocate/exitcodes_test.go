package main

import (
	"bytes"
	"testing"

	"github.com/spf13/cobra"

	"github.com/cozystack/tenantkit/cli"
	"github.com/cozystack/tenantkit/internal/exitcodetest"
)

// TestMain lets exitcodetest run the test binary as the program.
func TestMain(m *testing.M) { exitcodetest.Main(m, main) }

// TestExitCodes runs command lines that need no server and checks the exit
// code and the first line of stderr of each.
func TestExitCodes(t *testing.T) {
	kc := exitcodetest.WriteKubeconfigs(t)
	cluster := []string{"--namespace", "tenant-a", "--member", "etcd-1", "--to-node", "node-c"}
	exitcodetest.Run(t, cli.Execute, func(stdout *bytes.Buffer) *cobra.Command { return newCommand(&options{out: stdout}) }, []exitcodetest.Case{
		{Name: "stray argument", Args: []string{"etcd-1"}, Code: cli.ExitUsage, First: `etcd-relocate: unknown command "etcd-1" for "etcd-relocate"`},
		{Name: "unknown flag", Args: []string{"--no-such-flag"}, Code: cli.ExitUsage, First: "etcd-relocate: unknown flag: --no-such-flag"},
		{Name: "negative timeout", Args: []string{"--timeout", "-5s"}, Code: cli.ExitUsage, First: `etcd-relocate: invalid argument "-5s" for "--timeout" flag: -5s is negative (0 means no limit)`},
		{Name: "cluster flags without --kubeconfig", Args: []string{"--namespace", "tenant-a"}, Code: cli.ExitUsage, First: "etcd-relocate: --namespace and --direct need --kubeconfig"},
		{Name: "--kubeconfig without the member", Args: []string{"--kubeconfig", kc.Unreachable}, Code: cli.ExitUsage, First: "etcd-relocate: --kubeconfig needs --namespace, --member and --to-node"},
		{Name: "missing kubeconfig", Args: append([]string{"--kubeconfig", kc.Missing}, cluster...), Code: cli.ExitUsage, First: "etcd-relocate: load kubeconfig " + kc.Missing},
		{Name: "garbled kubeconfig", Args: append([]string{"--kubeconfig", kc.Garbled}, cluster...), Code: cli.ExitUsage, First: "etcd-relocate: load kubeconfig " + kc.Garbled},
		{Name: "unknown context", Args: append([]string{"--kubeconfig", kc.Unreachable, "--context", "nope"}, cluster...), Code: cli.ExitUsage, First: "etcd-relocate: load kubeconfig " + kc.Unreachable},
		{Name: "unreachable cluster", Args: append([]string{"--kubeconfig", kc.Unreachable}, cluster...), Code: cli.ExitUnavailable, First: "etcd-relocate: cluster of " + kc.Unreachable + " does not answer"},
		{Name: "interrupted", Ctx: exitcodetest.Cancelled(), Args: append([]string{"--kubeconfig", kc.Unreachable}, cluster...), Code: cli.ExitInterrupted, First: "etcd-relocate: interrupted"},
		{Name: "node without a node", Args: []string{"node"}, Code: cli.ExitUsage, First: "etcd-relocate: accepts 1 arg(s), received 0"},
		{Name: "evacuate without --node", Args: []string{"evacuate"}, Code: cli.ExitUsage, First: "etcd-relocate: evacuate needs --node"},
		{Name: "evacuate --max-parallel 0", Args: []string{"evacuate", "--node", "n", "--max-parallel", "0"}, Code: cli.ExitUsage, First: "etcd-relocate: --max-parallel must be at least 1"},
		{Name: "spread without --kubeconfig", Args: []string{"spread", "--namespace", "tenant-a"}, Code: cli.ExitUsage, First: "etcd-relocate: spread needs --kubeconfig and --namespace"},
		{Name: "evacuate --direct embedded", Args: []string{"evacuate", "--node", "n", "--direct"}, Code: cli.ExitUsage, First: "etcd-relocate: --direct needs --kubeconfig"},
		{Name: "node: unreachable cluster", Args: []string{"node", "worker-1", "--kubeconfig", kc.Unreachable}, Code: cli.ExitUnavailable, First: "etcd-relocate: cluster of " + kc.Unreachable + " does not answer"},
		{Name: "node name not DNS-1123", Args: []string{"node", "Worker_1", "--kubeconfig", kc.Unreachable}, Code: cli.ExitUsage, First: `etcd-relocate: NODE "Worker_1": a lowercase RFC 1123 subdomain`},
		{Name: "evacuate --node not DNS-1123", Args: []string{"evacuate", "--node", "-x", "--kubeconfig", kc.Unreachable}, Code: cli.ExitUsage, First: `etcd-relocate: --node "-x": a lowercase RFC 1123 subdomain`},
		{Name: "spread --namespace not DNS-1123", Args: []string{"spread", "--namespace", "Tenant_A", "--kubeconfig", kc.Unreachable}, Code: cli.ExitUsage, First: `etcd-relocate: --namespace "Tenant_A": a lowercase RFC 1123 label`},
		{Name: "--namespace not DNS-1123", Args: []string{"--kubeconfig", kc.Unreachable, "--namespace", "tenant.a", "--member", "etcd-1", "--to-node", "node-c"}, Code: cli.ExitUsage, First: `etcd-relocate: --namespace "tenant.a": must not contain dots`},
		{Name: "--to-node not DNS-1123", Args: append([]string{"--kubeconfig", kc.Unreachable}, "--namespace", "tenant-a", "--member", "etcd-1", "--to-node", "Node C"), Code: cli.ExitUsage, First: `etcd-relocate: --to-node "Node C": a lowercase RFC 1123 subdomain`},
		{Name: "embedded --to-node not DNS-1123", Args: []string{"--to-node", "node_c"}, Code: cli.ExitUsage, First: `etcd-relocate: --to-node "node_c": a lowercase RFC 1123 subdomain`},
		{Name: "empty --cluster", Args: append([]string{"--kubeconfig", kc.Unreachable, "--cluster", ""}, cluster...), Code: cli.ExitUsage, First: "etcd-relocate: --cluster must not be empty"},
		{Name: "evacuate: unreachable cluster", Args: []string{"evacuate", "--node", "worker-1", "--kubeconfig", kc.Unreachable}, Code: cli.ExitUnavailable, First: "etcd-relocate: cluster of " + kc.Unreachable + " does not answer"},
	})
}
