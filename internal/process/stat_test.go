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
