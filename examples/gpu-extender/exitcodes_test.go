package main

import (
	"bytes"
	"io"
	"testing"

	"github.com/spf13/cobra"

	"github.com/cozystack/tenantkit/cli"
	"github.com/cozystack/tenantkit/internal/exitcodetest"
)

// TestExitCodes runs command lines that need no server and checks the exit
// code and the first line of stderr of each.
func TestExitCodes(t *testing.T) {
	kc := exitcodetest.WriteKubeconfigs(t)
	exitcodetest.Run(t, cli.Execute, func(stdout *bytes.Buffer) *cobra.Command {
		return newCommand(&options{out: stdout, progress: io.Discard})
	}, []exitcodetest.Case{
		{Name: "stray argument", Args: []string{"extra"}, Code: cli.ExitUsage, First: `gpu-extender: unknown command "extra" for "gpu-extender"`},
		{Name: "unknown flag", Args: []string{"--no-such-flag"}, Code: cli.ExitUsage, First: "gpu-extender: unknown flag: --no-such-flag"},
		{Name: "negative timeout", Args: []string{"--timeout", "-5s"}, Code: cli.ExitUsage, First: `gpu-extender: invalid argument "-5s" for "--timeout" flag: -5s is negative (0 means no limit)`},
		{Name: "a certificate without its key", Args: []string{"--cert", "tls.crt"}, Code: cli.ExitUsage, First: "gpu-extender: --cert and --key go together"},
		{Name: "missing kubeconfig", Args: []string{"--kubeconfig", kc.Missing}, Code: cli.ExitUsage, First: "gpu-extender: load kubeconfig " + kc.Missing},
		{Name: "garbled kubeconfig", Args: []string{"--kubeconfig", kc.Garbled}, Code: cli.ExitUsage, First: "gpu-extender: load kubeconfig " + kc.Garbled},
		{Name: "unknown context", Args: []string{"--kubeconfig", kc.Unreachable, "--context", "nope"}, Code: cli.ExitUsage, First: "gpu-extender: load kubeconfig " + kc.Unreachable},
		{Name: "unreachable cluster", Args: []string{"--kubeconfig", kc.Unreachable}, Code: cli.ExitUnavailable, First: "gpu-extender: cluster of " + kc.Unreachable + " does not answer"},
		{Name: "interrupted", Ctx: exitcodetest.Cancelled(), Args: []string{"--kubeconfig", kc.Unreachable}, Code: cli.ExitInterrupted, First: "gpu-extender: interrupted"},
	})
}
