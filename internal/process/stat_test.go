package process

import (
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestExited(t *testing.T) {
	require.False(t, Exited(os.Getpid()))
	f, err := StatFields(os.Getpid())
	require.NoError(t, err)
	require.Greater(t, len(f), 19, "the start time is there")

	cmd := exec.Command("true")
	require.NoError(t, cmd.Start())
	pid := cmd.Process.Pid
	require.Eventually(t, func() bool { return Exited(pid) }, 10e9, 10e6, "a zombie counts as exited")
	require.NoError(t, cmd.Wait())
	require.True(t, Exited(pid), "a reaped process has exited")
}

func TestStartTime(t *testing.T) {
	a, err := StartTime(os.Getpid())
	require.NoError(t, err)
	require.Positive(t, a)
	b, err := StartTime(os.Getpid())
	require.NoError(t, err)
	require.Equal(t, a, b, "one process, one start time")
	cmd := exec.Command("true")
	require.NoError(t, cmd.Run())
	_, err = StartTime(cmd.Process.Pid)
	require.Error(t, err, "a reaped process has none")
}
