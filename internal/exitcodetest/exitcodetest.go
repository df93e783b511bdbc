// Package exitcodetest runs the exit-code tables of the examples: each case
// is a command line, the exit code it must end with and how the first line
// of its stderr must start; a case that fails must leave stdout empty
// (where stdout is a protocol, the credential plugin's ExecCredential, a
// half answer is worse than none).
//
// A package whose TestMain calls [Main] runs each case as the program
// itself: the test binary, started again with the case's arguments, runs
// the example's main, so that what is checked is the exit status, stdout
// and stderr of a process. Cases with a Ctx (an interrupt) and packages
// without Main run in process, through the execute function the caller
// passes (cli.Execute). It imports no package of tenantkit: an internal
// helper sits below the public packages, never above them.
package exitcodetest

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
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
	// Stderr, if set, is what stderr must contain besides (the error
	// after instructions, for example).
	Stderr string
	// Stdout, if set, is what stdout must contain; unset, a case that
	// does not exit 0 must leave stdout empty.
	Stdout string
	// Env are extra environment variables (KEY=value) of the process.
	Env []string
}

// mainEnv, set to 1, makes a test binary that calls Main run the program.
const mainEnv = "TENANTKIT_EXITCODETEST_MAIN"

// binary is set by Main: cases run as processes of the test binary.
var binary bool

// Main is a TestMain's body: when Run started the test binary as the
// program, it runs main (which exits with the program's code); otherwise
// it runs the tests, each case of Run as a process.
func Main(m *testing.M, main func()) {
	if os.Getenv(mainEnv) == "1" {
		main()
		os.Exit(0)
	}
	binary = true
	os.Exit(m.Run())
}

// Execute runs a command line and returns its exit code: cli.Execute.
type Execute func(ctx context.Context, cmd *cobra.Command) int

// Run runs each case through execute with a fresh command from newCmd,
// its output and error output captured.
func Run(t *testing.T, execute Execute, newCmd func(stdout *bytes.Buffer) *cobra.Command, cases []Case) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			var (
				code           int
				stdout, stderr bytes.Buffer
			)
			if binary && tc.Ctx == nil {
				code = runProcess(t, tc, &stdout, &stderr)
			} else {
				for _, kv := range tc.Env {
					k, v, _ := strings.Cut(kv, "=")
					t.Setenv(k, v)
				}
				ctx := tc.Ctx
				if ctx == nil {
					ctx = context.Background()
				}
				cmd := newCmd(&stdout)
				cmd.SetArgs(tc.Args)
				cmd.SetOut(&stdout)
				cmd.SetErr(&stderr)
				code = execute(ctx, cmd)
			}
			require.Equal(t, tc.Code, code, stderr.String())
			first, _, _ := strings.Cut(stderr.String(), "\n")
			require.True(t, strings.HasPrefix(first, tc.First), "first line of stderr: %q, want it to start with %q", first, tc.First)
			require.Contains(t, stderr.String(), tc.Stderr)
			switch {
			case tc.Stdout != "":
				require.Contains(t, stdout.String(), tc.Stdout)
			case tc.Code != 0:
				require.Empty(t, stdout.String(), "stdout of a failed run")
			}
		})
	}
}

// runProcess runs the test binary as the program with the case's
// arguments and returns its exit status.
func runProcess(t *testing.T, tc Case, stdout, stderr *bytes.Buffer) int {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), os.Args[0], tc.Args...)
	cmd.Env = append(append(os.Environ(), mainEnv+"=1"), tc.Env...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	require.NoError(t, err)
	return 0
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
