package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"
)

func TestExitCode(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		err  error
		want int
	}{
		{"success", context.Background(), nil, ExitOK},
		{"plain error", context.Background(), errors.New("boom"), ExitFailure},
		{"usage", context.Background(), Usage("need --member"), ExitUsage},
		{"wrapped unavailable", context.Background(), fmt.Errorf("open: %w", WithCode(ExitUnavailable, errors.New("down"))), ExitUnavailable},
		{"interrupted", cancelled, errors.New("context canceled"), ExitInterrupted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, exitCode(tt.ctx, tt.err))
		})
	}
	require.NoError(t, WithCode(ExitFailure, nil))
}

func TestTable(t *testing.T) {
	var b bytes.Buffer
	Table(&b, []string{"NAME", "VALUE"}, [][]string{{"a", "1"}, {"longer-name", "2"}})
	require.Equal(t, "NAME         VALUE\na            1\nlonger-name  2\n", b.String())
}

func TestStep_logOutput(t *testing.T) {
	var b bytes.Buffer
	s := Step(&b, "doing a thing")
	s.Done(errors.New("failed"))
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	require.Len(t, lines, 2)
	require.Equal(t, "  … doing a thing", lines[0])
	require.True(t, strings.HasPrefix(lines[1], "  ✗ doing a thing ("), lines[1])
}

// noEmbedded fails the test if Open starts the embedded environment.
func noEmbedded(t *testing.T) *Embedded {
	return &Embedded{Start: func(context.Context, *slog.Logger, io.Writer) (*rest.Config, func() error, error) {
		t.Error("Open started the embedded environment with --kubeconfig")
		return nil, nil, errors.New("not with --kubeconfig")
	}}
}

func TestOpen_unreachableKubeconfig(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close()) // nothing listens there
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(kc, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:%d", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`, port)), 0o600))
	target := Target{Kubeconfig: kc}
	err = target.Open(t.Context(), noEmbedded(t))
	var ee *ExitError
	require.ErrorAs(t, err, &ee)
	require.Equal(t, ExitUnavailable, ee.Code)
	require.Nil(t, target.stop)

	target = Target{Kubeconfig: filepath.Join(t.TempDir(), "missing")}
	err = target.Open(t.Context(), nil)
	require.ErrorAs(t, err, &ee)
	require.Equal(t, ExitUsage, ee.Code)
}

func TestOpen_embedded(t *testing.T) {
	rc := &rest.Config{Host: "https://127.0.0.1:6443"}
	for _, tt := range []struct {
		name     string
		embedded func(stopped *bool) *Embedded
		code     int      // of Open's error; ExitOK: none
		progress []string // the lines of Open and Close, elapsed times cut
	}{
		{"started and stopped", func(stopped *bool) *Embedded {
			return &Embedded{Components: "etcd, kube-apiserver", Start: func(_ context.Context, log *slog.Logger, builds io.Writer) (*rest.Config, func() error, error) {
				if log == nil {
					return nil, nil, errors.New("no logger")
				}
				fmt.Fprintln(builds, "building kube-apiserver")
				return rc, func() error { *stopped = true; return nil }, nil
			}}
		}, ExitOK, []string{
			"  … starting the embedded local environment (etcd, kube-apiserver)",
			"building kube-apiserver",
			"  ✓ starting the embedded local environment (etcd, kube-apiserver)",
			"  … stopping the embedded local environment",
			"  ✓ stopping the embedded local environment",
		}},
		{"fails to start", func(*bool) *Embedded {
			return &Embedded{Components: "etcd", Start: func(context.Context, *slog.Logger, io.Writer) (*rest.Config, func() error, error) {
				return nil, nil, errors.New("etcd did not start")
			}}
		}, ExitUnavailable, []string{
			"  … starting the embedded local environment (etcd)",
			"  ✗ starting the embedded local environment (etcd)",
		}},
		{"none", func(*bool) *Embedded { return nil }, ExitUsage, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			var stopped bool
			target := Target{Out: &out}
			err := target.Open(t.Context(), tt.embedded(&stopped))
			if tt.code == ExitOK {
				require.NoError(t, err)
				require.Same(t, rc, target.RESTConfig)
			} else {
				var ee *ExitError
				require.ErrorAs(t, err, &ee)
				require.Equal(t, tt.code, ee.Code)
			}
			require.NoError(t, target.Close())
			require.Equal(t, tt.code == ExitOK, stopped)
			require.Equal(t, tt.progress, progressLines(out.String()))
		})
	}
}

// progressLines splits the log output of steps into lines, the elapsed
// times of the ✓ and ✗ lines cut.
func progressLines(out string) []string {
	var lines []string
	for l := range strings.Lines(out) {
		l = strings.TrimSuffix(l, "\n")
		if i := strings.LastIndex(l, " ("); i >= 0 && (strings.HasPrefix(l, "  ✓") || strings.HasPrefix(l, "  ✗")) {
			l = l[:i]
		}
		lines = append(lines, l)
	}
	return lines
}

func TestExecute_commandLines(t *testing.T) {
	newCmd := func() *cobra.Command {
		var timeout Timeout
		root := &cobra.Command{Use: "tool", Long: "Does things.", Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				ctx, cancel := timeout.Context(cmd.Context())
				defer cancel()
				<-ctx.Done()
				return fmt.Errorf("cluster does not answer: %w", ctx.Err())
			}}
		timeout.AddFlag(root.PersistentFlags())
		root.AddCommand(&cobra.Command{Use: "sub NAME", Args: cobra.ExactArgs(1), RunE: func(*cobra.Command, []string) error { return nil }})
		return root
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tt := range []struct {
		name  string
		ctx   context.Context
		args  []string
		code  int
		first string
	}{
		{"stray argument", context.Background(), []string{"sub", "a", "b"}, ExitUsage, "tool: accepts 1 arg(s), received 2"},
		{"unknown subcommand", context.Background(), []string{"nope"}, ExitUsage, `tool: unknown command "nope" for "tool"`},
		{"negative timeout", context.Background(), []string{"--timeout", "-5s"}, ExitUsage, `tool: invalid argument "-5s" for "--timeout" flag: -5s is negative (0 means no limit)`},
		{"garbled timeout", context.Background(), []string{"--timeout", "soon"}, ExitUsage, `tool: invalid argument "soon" for "--timeout" flag: time: invalid duration "soon"`},
		{"timeout runs out", context.Background(), []string{"--timeout", "1ms"}, ExitFailure, "tool: cluster does not answer: context deadline exceeded"},
		{"interrupted", cancelled, nil, ExitInterrupted, "tool: interrupted"},
		{"subcommand", context.Background(), []string{"sub", "a"}, ExitOK, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			cmd := newCmd()
			cmd.SetArgs(tt.args)
			cmd.SetErr(&stderr)
			require.Equal(t, tt.code, Execute(tt.ctx, cmd), stderr.String())
			first, _, _ := strings.Cut(stderr.String(), "\n")
			require.Equal(t, tt.first, first)
		})
	}

	var stdout bytes.Buffer
	cmd := newCmd()
	cmd.SetArgs([]string{"--help"})
	cmd.SetOut(&stdout)
	require.Equal(t, ExitOK, Execute(context.Background(), cmd))
	require.Contains(t, stdout.String(), ExitCodesHelp)
	require.Contains(t, stdout.String(), "give up after this long, e.g. 30m (0: no limit)")
}

// TestChecks: each flag check passes a good value and an empty one, and
// refuses a bad one with ExitUsage naming the flag.
func TestChecks(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "not.pem")
	require.NoError(t, os.WriteFile(notPEM, []byte("hello\n"), 0o600))
	key := filepath.Join(dir, "key.pem")
	require.NoError(t, os.WriteFile(key, []byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"), 0o600))
	for _, tt := range []struct {
		name  string
		check func() error
		want  string // "" passes
	}{
		{"label", func() error { return CheckDNSLabel("--namespace", "tenant-a") }, ""},
		{"label empty", func() error { return CheckDNSLabel("--namespace", "") }, ""},
		{"label upper case", func() error { return CheckDNSLabel("--namespace", "Tenant_A") }, `--namespace "Tenant_A": a lowercase RFC 1123 label`},
		{"subdomain", func() error { return CheckDNSSubdomain("--node", "worker-1.example") }, ""},
		{"subdomain bad", func() error { return CheckDNSSubdomain("--node", "-x") }, `--node "-x": a lowercase RFC 1123 subdomain`},
		{"https", func() error { return CheckHTTPSURL("--server", "https://k.example.org:6443") }, ""},
		{"http", func() error { return CheckHTTPSURL("--server", "http://k.example.org") }, `--server "http://k.example.org" is not an https URL`},
		{"no scheme", func() error { return CheckHTTPSURL("--server", "k.example.org") }, `--server "k.example.org" is not an https URL`},
		{"garbage", func() error { return CheckHTTPSURL("--server", "https://[::1") }, "--server: parse"},
		{"one of", func() error { return CheckOneOf("--policy", "update", "", "none", "update") }, ""},
		{"none of", func() error { return CheckOneOf("--policy", "replace", "none", "update") }, `--policy "replace": want one of "none", "update"`},
		{"PEM missing", func() error { _, err := ReadPEMCertificates("--ca-file", filepath.Join(dir, "absent")); return err }, "--ca-file: open "},
		{"PEM not PEM", func() error { _, err := ReadPEMCertificates("--ca-file", notPEM); return err }, "--ca-file " + notPEM + ": not a PEM file of certificates"},
		{"PEM a key", func() error { _, err := ReadPEMCertificates("--ca-file", key); return err }, `a PEM "PRIVATE KEY" block where certificates are expected`},
		{"PEM empty path", func() error { _, err := ReadPEMCertificates("--ca-file", ""); return err }, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.check()
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tt.want)
			require.Equal(t, ExitUsage, exitCode(context.Background(), err))
		})
	}
	require.Equal(t, ExitFailure, exitCode(context.Background(), NotFound("node", "n", "the cluster")))
	require.EqualError(t, NotFound("node", "n", "the cluster of k"), `node "n" not found in the cluster of k`)
}
