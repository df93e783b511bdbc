package examplecli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cozystack/tenantkit/localenv"
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

func TestOpen_unreachableKubeconfig(t *testing.T) {
	port, err := localenv.FreePort() // nothing listens there
	require.NoError(t, err)
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(kc, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:%d", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`, port)), 0o600))
	target := Target{Kubeconfig: kc}
	err = target.Open(t.Context(), localenv.Config{})
	var ee *ExitError
	require.ErrorAs(t, err, &ee)
	require.Equal(t, ExitUnavailable, ee.Code)
	require.Nil(t, target.Env)

	target = Target{Kubeconfig: filepath.Join(t.TempDir(), "missing")}
	err = target.Open(t.Context(), localenv.Config{})
	require.ErrorAs(t, err, &ee)
	require.Equal(t, ExitUnavailable, ee.Code)
}
