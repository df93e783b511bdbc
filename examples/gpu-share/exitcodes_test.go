package main

import (
	"bytes"
	"io"
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
	exitcodetest.Run(t, cli.Execute, func(stdout *bytes.Buffer) *cobra.Command {
		return newCommand(&options{out: stdout, progress: io.Discard})
	}, []exitcodetest.Case{
		{Name: "stray argument", Args: []string{"extra"}, Code: cli.ExitUsage, First: `gpu-share: unknown command "extra" for "gpu-share"`},
		{Name: "unknown flag", Args: []string{"--no-such-flag"}, Code: cli.ExitUsage, First: "gpu-share: unknown flag: --no-such-flag"},
		{Name: "negative timeout", Args: []string{"--timeout", "-5s"}, Code: cli.ExitUsage, First: `gpu-share: invalid argument "-5s" for "--timeout" flag: -5s is negative (0 means no limit)`},
		{Name: "a shape out of range", Args: []string{"--gpucores", "101"}, Code: cli.ExitUsage, First: "gpu-share: --gpus must be at least 1, --gpumem at least 0, --gpucores within 0–100"},
		{Name: "unknown policy", Args: []string{"--node-policy", "random"}, Code: cli.ExitUsage, First: "gpu-share: --node-policy:"},
		{Name: "missing kubeconfig", Args: []string{"--kubeconfig", kc.Missing}, Code: cli.ExitUsage, First: "gpu-share: load kubeconfig " + kc.Missing},
		{Name: "garbled kubeconfig", Args: []string{"--kubeconfig", kc.Garbled}, Code: cli.ExitUsage, First: "gpu-share: load kubeconfig " + kc.Garbled},
		{Name: "unknown context", Args: []string{"--kubeconfig", kc.Unreachable, "--context", "nope"}, Code: cli.ExitUsage, First: "gpu-share: load kubeconfig " + kc.Unreachable},
		{Name: "unreachable cluster", Args: []string{"--kubeconfig", kc.Unreachable}, Code: cli.ExitUnavailable, First: "gpu-share: cluster of " + kc.Unreachable + " does not answer"},
		{Name: "interrupted", Ctx: exitcodetest.Cancelled(), Args: []string{"--kubeconfig", kc.Unreachable}, Code: cli.ExitInterrupted, First: "gpu-share: interrupted"},
	})
}
