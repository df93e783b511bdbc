// Package exitcodetest runs the exit-code tables of the examples: each case
// is a command line, the exit code it must end with and how the first line
// of its stderr must start.
//
// It runs a command through the execute function its caller passes
// (cli.Execute) and imports no package of tenantkit: an internal helper
// sits below the public packages, never above them.
package exitcodetest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"
)

// Case is one command line of an example's exit-code table.
type Case struct {
	Name string
	// Ctx is the context the command runs with; nil is
	// context.Background() (a cancelled one plays an interrupt).
	Ctx  context.Context
	Args []string
	// Code is the exit code (one of the cli.Exit constants).
	Code int
	// First is what the first line of stderr starts with.
	First string
}

// Execute runs a command line and returns its exit code: cli.Execute.
type Execute func(ctx context.Context, cmd *cobra.Command) int

// Run runs each case through execute with a fresh command from newCmd,
// its output and error output captured.
func Run(t *testing.T, execute Execute, newCmd func(stdout *bytes.Buffer) *cobra.Command, cases []Case) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			ctx := tc.Ctx
			if ctx == nil {
				ctx = context.Background()
			}
			var stdout, stderr bytes.Buffer
			cmd := newCmd(&stdout)
			cmd.SetArgs(tc.Args)
			cmd.SetOut(&stdout)
			cmd.SetErr(&stderr)
			require.Equal(t, tc.Code, execute(ctx, cmd), stderr.String())
			first, _, _ := strings.Cut(stderr.String(), "\n")
			require.True(t, strings.HasPrefix(first, tc.First), "first line of stderr: %q, want it to start with %q", first, tc.First)
		})
	}
}

// Cancelled returns a context that is already cancelled, as after Ctrl-C.
func Cancelled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// Kubeconfigs are kubeconfig files for the exit-code cases: one that is
// missing, one that is not YAML, and one whose cluster does not answer
// (nothing listens on port 1 of the loopback).
type Kubeconfigs struct {
	Missing, Garbled, Unreachable string
}

// WriteKubeconfigs writes them under a temporary directory of t.
func WriteKubeconfigs(t testing.TB) Kubeconfigs {
	t.Helper()
	dir := t.TempDir()
	k := Kubeconfigs{
		Missing:     filepath.Join(dir, "missing.kubeconfig"),
		Garbled:     filepath.Join(dir, "garbled.kubeconfig"),
		Unreachable: filepath.Join(dir, "unreachable.kubeconfig"),
	}
	require.NoError(t, os.WriteFile(k.Garbled, []byte("apiVersion: v1\nkind: Config\nclusters: {{{\n"), 0o600))
	require.NoError(t, os.WriteFile(k.Unreachable, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`), 0o600))
	return k
}
