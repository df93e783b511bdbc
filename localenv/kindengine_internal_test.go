package localenv

import (
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kind/pkg/cluster"

	"github.com/cozystack/tenantkit/internal/kindnode"
)

// TestDockerWrapper runs the wrapper against a fake docker that prints its
// arguments (NUL-separated): kind's privileged run and exec are rewritten, the rest passes
// unchanged.
func TestDockerWrapper(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "real")
	require.NoError(t, os.MkdirAll(fake, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(fake, "docker"), []byte("#!/bin/sh\nprintf '%s\\0' \"$@\"\n"), 0o755))
	t.Setenv("PATH", fake+string(os.PathListSeparator)+os.Getenv("PATH"))
	wrap := filepath.Join(dir, "wrap")
	require.NoError(t, os.MkdirAll(wrap, 0o755))
	require.NoError(t, writeDockerWrapper(wrap))
	run := func(args ...string) []string {
		out, err := exec.Command(filepath.Join(wrap, "docker"), args...).CombinedOutput()
		require.NoError(t, err, string(out))
		return strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
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
			require.Equal(t, nodePreStep, rest[4])
			out, err := exec.Command("sh", "-n", "-c", nodePreStep).CombinedOutput()
			require.NoError(t, err, "the pre-step is POSIX sh: %s", out)
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

// TestKindLeftovers: with real docker, the nodes and network of a cluster
// whose owner died are removed, a live owner's are kept. The "nodes" are
// created, never started, containers of the node image. A kind test
// (TENANTKIT_KIND=1): make test builds the node image beside go test ./...,
// and runs the kind tests once it is there.
func TestKindLeftovers(t *testing.T) {
	if testing.Short() {
		t.Skip("uses docker")
	}
	if os.Getenv("TENANTKIT_KIND") == "" {
		t.Skip("set TENANTKIT_KIND=1 to run the kind tests (make test-kind)")
	}
	if exec.Command("docker", "info").Run() != nil {
		t.Skip("no container engine answers")
	}
	out, err := exec.Command("docker", "image", "ls", kindnode.Repository, "--format", "{{.Repository}}:{{.Tag}}").Output()
	require.NoError(t, err)
	require.NotEmpty(t, strings.Fields(string(out)), "no tenantkit node image here (make kind-node-image)")
	image := strings.Fields(string(out))[0]
	live, err := kindClusterName()
	require.NoError(t, err)
	dead := "tenantkit-999999999-1-dead"
	for _, name := range []string{live, dead} {
		net := kindNetworkPrefix + name
		require.NoError(t, exec.Command("docker", "network", "create", "--label", "io.tenantkit.test=kind-leftovers", net).Run())
		t.Cleanup(func() { _ = exec.Command("docker", "network", "rm", net).Run() })
		c := name + "-control-plane"
		out, err := exec.Command("docker", "create", "--name", c, "--network", net, "--label", "io.x-k8s.kind.cluster="+name,
			"--label", "io.x-k8s.kind.role=control-plane", "--label", "io.tenantkit.test=kind-leftovers", image).CombinedOutput()
		require.NoError(t, err, string(out))
		t.Cleanup(func() { _ = exec.Command("docker", "rm", "-f", "-v", c).Run() })
	}
	provider := cluster.NewProvider(cluster.ProviderWithDocker())
	require.NoError(t, cleanKindLeftovers(t.Context(), provider, slog.New(slog.DiscardHandler)))
	exists := func(args ...string) bool { return exec.Command("docker", args...).Run() == nil }
	require.False(t, exists("container", "inspect", dead+"-control-plane"), "dead owner's node")
	require.False(t, exists("network", "inspect", kindNetworkPrefix+dead), "dead owner's network")
	require.True(t, exists("container", "inspect", live+"-control-plane"), "live owner's node")
	require.True(t, exists("network", "inspect", kindNetworkPrefix+live), "live owner's network")
}

// FuzzKindOwnerAlive: any name either is not tenantkit's or names an
// owner; only tenantkit-<pid>-<start>-<x> names are tenantkit's.
func FuzzKindOwnerAlive(f *testing.F) {
	f.Add("tenantkit-1-2-ab")
	f.Add("kind")
	f.Add("tenantkit--1-2-")
	f.Fuzz(func(t *testing.T, name string) {
		_, ok := kindOwnerAlive(name)
		if ok {
			require.True(t, strings.HasPrefix(name, kindClusterPrefix))
			require.Len(t, strings.Split(strings.TrimPrefix(name, kindClusterPrefix), "-"), 3)
		}
	})
}

// TestProbeEngine_refusalQuoted: a refusal tenantkit has no adaptation for
// (here: the image is not there, and the probe never pulls) is an
// *EngineRefusalError quoting the engine.
func TestProbeEngine_refusalQuoted(t *testing.T) {
	if testing.Short() {
		t.Skip("uses docker")
	}
	if exec.Command("docker", "info").Run() != nil {
		t.Skip("no container engine answers")
	}
	_, err := probeEngine(t.Context(), "tenantkit.invalid/absent:0")
	var refusal *EngineRefusalError
	require.ErrorAs(t, err, &refusal)
	require.Equal(t, "docker", refusal.Engine)
	require.Contains(t, refusal.Output, "No such image")
	require.Contains(t, err.Error(), "tenantkit.invalid/absent:0")
}
