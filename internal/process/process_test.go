package process_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cozystack/tenantkit/internal/process"
)

func start(t *testing.T, script string, grace time.Duration) *process.Process {
	t.Helper()
	p, err := process.Start(process.Config{
		Name: "test", Path: "/bin/sh", Args: []string{"-c", script},
		LogPath: filepath.Join(t.TempDir(), "log"), StopGrace: grace,
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Kill() })
	return p
}

func TestStop_sigtermThenSigkill(t *testing.T) {
	// The shell ignores SIGTERM, so Stop must escalate to SIGKILL.
	p := start(t, "trap '' TERM; echo started; while true; do sleep 0.1; done", 200*time.Millisecond)
	require.Eventually(t, func() bool { return p.LogTail(1) == "started" }, 5*time.Second, 10*time.Millisecond)
	begin := time.Now()
	require.NoError(t, p.Stop())
	require.False(t, p.Running())
	require.GreaterOrEqual(t, time.Since(begin), 200*time.Millisecond)
	require.NoError(t, p.Stop(), "stopping twice is a no-op")
}

func TestWaitReady_exitBeforeReady(t *testing.T) {
	p := start(t, "echo 'fatal: no disk'; exit 7", 0)
	err := process.WaitReady(t.Context(), p, 10*time.Second, func(context.Context) error { return errors.New("not yet") })
	var ee *process.ExitError
	require.ErrorAs(t, err, &ee)
	require.ErrorIs(t, err, process.ErrExited)
	require.Contains(t, ee.LogTail, "fatal: no disk")
	require.Equal(t, 7, p.ExitCode())
}

func TestWaitReady_timeout(t *testing.T) {
	p := start(t, "sleep 30", 0)
	err := process.WaitReady(t.Context(), p, 300*time.Millisecond, func(context.Context) error { return errors.New("still warming up") })
	var nr *process.NotReadyError
	require.ErrorAs(t, err, &nr)
	require.ErrorContains(t, err, "still warming up")
}

func TestWaitReady_ready(t *testing.T) {
	p := start(t, "sleep 30", 0)
	calls := 0
	err := process.WaitReady(t.Context(), p, 5*time.Second, func(context.Context) error {
		calls++
		if calls < 3 {
			return errors.New("not yet")
		}
		return nil
	})
	require.NoError(t, err)
	require.True(t, p.Running())
}

func TestTail(t *testing.T) {
	require.Contains(t, process.Tail("/nonexistent/log", 5), "no log")
}
