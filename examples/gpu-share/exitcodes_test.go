package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cozystack/tenantkit/internal/examplecli"
)

// TestExitCodes runs command lines that need no server and checks the exit
// code and the first line of stderr of each.
func TestExitCodes(t *testing.T) {
	kc, err := examplecli.WriteBadKubeconfigs(t.TempDir())
	require.NoError(t, err)
	var cluster []string
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tt := range []struct {
		name  string
		ctx   context.Context
		args  []string
		code  int
		first string
	}{
		{"stray argument", nil, []string{"etcd-1"}, examplecli.ExitUsage, `gpu-share: unknown command "etcd-1" for "gpu-share"`},
		{"unknown flag", nil, []string{"--no-such-flag"}, examplecli.ExitUsage, "gpu-share: unknown flag: --no-such-flag"},
		{"negative timeout", nil, []string{"--timeout", "-5s"}, examplecli.ExitUsage, `gpu-share: invalid argument "-5s" for "--timeout" flag: -5s is negative (0 means no limit)`},
		{"a shape out of range", nil, []string{"--gpucores", "101"}, examplecli.ExitUsage, "gpu-share: --gpus must be at least 1, --gpumem at least 0, --gpucores within 0–100"},
		{"unknown policy", nil, []string{"--node-policy", "random"}, examplecli.ExitUsage, "gpu-share: --node-policy:"},
		{"missing kubeconfig", nil, append([]string{"--kubeconfig", kc.Missing}, cluster...), examplecli.ExitUsage, "gpu-share: load kubeconfig " + kc.Missing},
		{"garbled kubeconfig", nil, append([]string{"--kubeconfig", kc.Garbled}, cluster...), examplecli.ExitUsage, "gpu-share: load kubeconfig " + kc.Garbled},
		{"unknown context", nil, append([]string{"--kubeconfig", kc.Unreachable, "--context", "nope"}, cluster...), examplecli.ExitUsage, "gpu-share: load kubeconfig " + kc.Unreachable},
		{"unreachable cluster", nil, append([]string{"--kubeconfig", kc.Unreachable}, cluster...), examplecli.ExitUnavailable, "gpu-share: cluster of " + kc.Unreachable + " does not answer"},
		{"interrupted", cancelled, append([]string{"--kubeconfig", kc.Unreachable}, cluster...), examplecli.ExitInterrupted, "gpu-share: interrupted"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := tt.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			var stdout, stderr bytes.Buffer
			cmd := newCommand(&options{out: &stdout, progress: io.Discard})
			cmd.SetArgs(tt.args)
			cmd.SetOut(&stdout)
			cmd.SetErr(&stderr)
			require.Equal(t, tt.code, examplecli.Execute(ctx, cmd), stderr.String())
			first, _, _ := strings.Cut(stderr.String(), "\n")
			require.True(t, strings.HasPrefix(first, tt.first), "first line of stderr: %q, want it to start with %q", first, tt.first)
		})
	}
}
