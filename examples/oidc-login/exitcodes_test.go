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
	cluster := []string{"--namespace", "tenant-a", "--cluster", "prod"}
	exitcodetest.Run(t, cli.Execute, func(stdout *bytes.Buffer) *cobra.Command { return newCommand(&options{out: stdout}) }, []exitcodetest.Case{
		{Name: "stray argument", Args: []string{"etcd-1"}, Code: cli.ExitUsage, First: `oidc-login: unknown command "etcd-1" for "oidc-login"`},
		{Name: "unknown flag", Args: []string{"--no-such-flag"}, Code: cli.ExitUsage, First: "oidc-login: unknown flag: --no-such-flag"},
		{Name: "negative timeout", Args: []string{"--timeout", "-5s"}, Code: cli.ExitUsage, First: `oidc-login: invalid argument "-5s" for "--timeout" flag: -5s is negative (0 means no limit)`},
		{Name: "cluster flags without --kubeconfig", Args: []string{"--namespace", "tenant-a"}, Code: cli.ExitUsage, First: "oidc-login: --namespace, --cluster and --apply-rbac need --kubeconfig"},
		{Name: "--kubeconfig without the cluster", Args: []string{"--kubeconfig", kc.Unreachable}, Code: cli.ExitUsage, First: "oidc-login: --kubeconfig needs --namespace and --cluster"},
		{Name: "--namespace not DNS-1123", Args: append([]string{"--kubeconfig", kc.Unreachable}, "--namespace", "Tenant_A", "--cluster", "prod"), Code: cli.ExitUsage, First: `oidc-login: --namespace "Tenant_A": a lowercase RFC 1123 label`},
		{Name: "--cluster not DNS-1123", Args: append([]string{"--kubeconfig", kc.Unreachable}, "--namespace", "tenant-a", "--cluster", "prod.eu"), Code: cli.ExitUsage, First: `oidc-login: --cluster "prod.eu": must not contain dots`},
		{Name: "unknown --plugin", Args: []string{"--plugin", "pinniped"}, Code: cli.ExitUsage, First: `oidc-login: --plugin "pinniped": want one of "kubelogin", "tenantkit"`},
		{Name: "missing kubeconfig", Args: append([]string{"--kubeconfig", kc.Missing}, cluster...), Code: cli.ExitUsage, First: "oidc-login: load kubeconfig " + kc.Missing},
		{Name: "garbled kubeconfig", Args: append([]string{"--kubeconfig", kc.Garbled}, cluster...), Code: cli.ExitUsage, First: "oidc-login: load kubeconfig " + kc.Garbled},
		{Name: "unknown context", Args: append([]string{"--kubeconfig", kc.Unreachable, "--context", "nope"}, cluster...), Code: cli.ExitUsage, First: "oidc-login: load kubeconfig " + kc.Unreachable},
		{Name: "unreachable cluster", Args: append([]string{"--kubeconfig", kc.Unreachable}, cluster...), Code: cli.ExitUnavailable, First: "oidc-login: cluster of " + kc.Unreachable + " does not answer"},
		{Name: "interrupted", Ctx: exitcodetest.Cancelled(), Args: append([]string{"--kubeconfig", kc.Unreachable}, cluster...), Code: cli.ExitInterrupted, First: "oidc-login: interrupted"},
	})
}
