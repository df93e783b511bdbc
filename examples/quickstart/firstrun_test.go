package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cozystack/tenantkit/cli"
	"github.com/cozystack/tenantkit/internal/serverbin"
)

// TestFirstRun_stepsNeedOnlyTheirPhases: the order of buildPhases is the
// order the story needs its servers. With only the first three phases in
// the server cache (etcd, kube-apiserver, dex) and building disabled, the
// tenant, oidc and gpu capabilities pass: on a first run they play while
// the later phases build. backup and etcd fail for want of their servers.
func TestFirstRun_stepsNeedOnlyTheirPhases(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts real servers (skipped with -short)")
	}
	cache := t.TempDir()
	var early []string
	for _, phase := range buildPhases[:3] {
		early = append(early, phase...)
	}
	require.Equal(t, []string{serverbin.Etcd.Name, serverbin.KubeAPIServer.Name, serverbin.Dex.Name}, early)
	for _, s := range []serverbin.Server{serverbin.Etcd, serverbin.KubeAPIServer, serverbin.Dex} {
		p, err := serverbin.Path(t.Context(), s)
		require.NoError(t, err)
		require.NoError(t, os.Symlink(p, filepath.Join(cache, filepath.Base(p))))
	}
	t.Setenv("TENANTKIT_CACHE_DIR", cache)
	t.Setenv(serverbin.NoBuildEnv, "1")
	for _, s := range append(serverbin.All(), serverbin.Optional()...) {
		t.Setenv(s.EnvVar(), "")
		t.Setenv(s.EnvtestVar(), "")
	}
	t.Setenv(serverbin.KubebuilderAssetsEnv, "")

	var out, progress bytes.Buffer
	o := &options{out: &out, progress: &progress, timeout: cli.Timeout(15 * time.Minute)}
	err := o.run(context.Background())
	t.Log("\n" + out.String())
	var ee *cli.ExitError
	require.ErrorAs(t, err, &ee, progress.String())
	require.Equal(t, cli.ExitFailure, ee.Code)
	got := out.String()
	for _, c := range []string{"tenant", "oidc", "gpu"} {
		requireResult(t, got, c, "ok: ")
	}
	requireResult(t, got, "backup", `FAILED: .*versitygw.*building is disabled`)
	requireResult(t, got, "etcd", `FAILED: .*building is disabled: kube-controller-manager, kube-scheduler`)
	require.Contains(t, progress.String(), "First run: building versitygw, velero, velero-plugin-for-aws, kube-controller-manager, kube-scheduler in the background, in the order they are needed")
}
