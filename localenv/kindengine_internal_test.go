package localenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDockerWrapper runs the wrapper against a fake docker that prints its
// arguments: kind's privileged run and exec are rewritten, the rest passes
// unchanged.
func TestDockerWrapper(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "real")
	require.NoError(t, os.MkdirAll(fake, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(fake, "docker"), []byte("#!/bin/sh\nfor a in \"$@\"; do echo \"$a\"; done\n"), 0o755))
	t.Setenv("PATH", fake+string(os.PathListSeparator)+os.Getenv("PATH"))
	wrap := filepath.Join(dir, "wrap")
	require.NoError(t, os.MkdirAll(wrap, 0o755))
	require.NoError(t, writeDockerWrapper(wrap))
	run := func(args ...string) []string {
		out, err := exec.Command(filepath.Join(wrap, "docker"), args...).CombinedOutput()
		require.NoError(t, err, string(out))
		return strings.Split(strings.TrimSpace(string(out)), "\n")
	}
	tests := []struct {
		name string
		args []string
		want func(t *testing.T, got []string)
	}{
		{"exec privileged", []string{"exec", "--privileged", "-i", "node", "cat", "--privileged"}, func(t *testing.T, got []string) {
			require.Equal(t, []string{"exec", "-i", "node", "cat", "--privileged"}, got)
		}},
		{"other calls", []string{"network", "ls", "--privileged"}, func(t *testing.T, got []string) {
			require.Equal(t, []string{"network", "ls", "--privileged"}, got)
		}},
		{"run unprivileged", []string{"run", "--name", "lb", "img", "arg"}, func(t *testing.T, got []string) {
			require.Equal(t, []string{"run", "--name", "lb", "img", "arg"}, got)
		}},
		{"run privileged", []string{"run", "--name", "n", "--privileged", "--volume", "/lib/modules:/lib/modules:ro", "kindest/node:x"}, func(t *testing.T, got []string) {
			require.NotContains(t, got, "--privileged")
			n := 3
			require.Equal(t, []string{"run", "--name", "n"}, got[:n])
			if fileExists("/lib/modules") {
				require.Equal(t, []string{"--volume", "/lib/modules:/lib/modules:ro"}, got[n:n+2])
				n += 2
			}
			require.Equal(t, unprivilegedNodeFlags(), got[n:n+len(unprivilegedNodeFlags())])
			rest := got[n+len(unprivilegedNodeFlags()):]
			require.Equal(t, []string{"--entrypoint", "/bin/sh", "kindest/node:x", "-c"}, rest[:4])
			require.Contains(t, rest[4], "mount -o remount,bind,rw")
			require.True(t, strings.HasSuffix(rest[4], "exec /usr/local/bin/entrypoint /sbin/init"), rest[4])
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.want(t, run(tt.args...)) })
	}
}

// TestKindOwnerAlive: cluster names carry their owner; this process's
// name is alive, a made-up owner is not, foreign names are not ours.
func TestKindOwnerAlive(t *testing.T) {
	name, err := kindClusterName()
	require.NoError(t, err)
	alive, ok := kindOwnerAlive(name)
	require.True(t, ok)
	require.True(t, alive)
	alive, ok = kindOwnerAlive("tenantkit-999999999-1-abcd")
	require.True(t, ok)
	require.False(t, alive)
	for _, foreign := range []string{"kind", "tenantkit", "tenantkit-1-2", "tenantkit-x-1-ab", "other-1-2-ab"} {
		_, ok := kindOwnerAlive(foreign)
		require.False(t, ok, foreign)
	}
}
