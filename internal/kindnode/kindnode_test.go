package kindnode

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAptMirror(t *testing.T) {
	tests := []struct{ name, text, want string }{
		{"one-line", "# c\ndeb http://mirror.example/debian bookworm main\n", "http://mirror.example/debian"},
		{"one-line options", "deb [arch=amd64] http://m.example/debian bookworm main\n", "http://m.example/debian"},
		{"deb822", "Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm\n", "http://deb.debian.org/debian"},
		{"security only", "deb http://deb.debian.org/debian-security bookworm-security main\n", ""},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "sources")
			require.NoError(t, os.WriteFile(p, []byte(tt.text), 0o644))
			require.Equal(t, tt.want, aptMirror(p))
		})
	}
}

// TestKey_stable: the key is a function of the inputs, and the root
// filesystem's key follows its package list.
func TestKey_stable(t *testing.T) {
	b := &Builder{}
	k1, err := b.Key(t.Context())
	require.NoError(t, err)
	k2, err := b.Key(t.Context())
	require.NoError(t, err)
	require.Equal(t, k1, k2)
	require.Len(t, k1, 12)
	before := rootfsKey()
	rootfsPackages = append(rootfsPackages, "jq")
	t.Cleanup(func() { rootfsPackages = rootfsPackages[:len(rootfsPackages)-1] })
	require.NotEqual(t, before, rootfsKey())
	k3, err := b.Key(t.Context())
	require.NoError(t, err)
	require.NotEqual(t, k1, k3)
}

// TestInstallNode lays tenantkit's files and programs into an empty root:
// kind's paths, executable scripts, the enabled and masked units.
func TestInstallNode(t *testing.T) {
	root := t.TempDir()
	bins := map[string]string{}
	for _, nb := range nodeBins() {
		p := filepath.Join(t.TempDir(), nb.bin.Name)
		require.NoError(t, os.WriteFile(p, []byte("#!/bin/true\n"), 0o644))
		bins[nb.bin.Name] = p
	}
	require.NoError(t, installNode(root, bins))
	for _, p := range []string{"usr/local/bin/entrypoint", "kind/bin/import-images.sh", "usr/bin/kubelet", "usr/bin/kubeadm",
		"usr/local/bin/kube-proxy", "opt/cni/bin/ptp", "opt/cni/bin/host-local"} {
		fi, err := os.Stat(filepath.Join(root, p))
		require.NoError(t, err, p)
		require.Equal(t, os.FileMode(0o755), fi.Mode().Perm(), p)
	}
	v, err := os.ReadFile(filepath.Join(root, "kind/version"))
	require.NoError(t, err)
	require.Equal(t, KubernetesVersion+"\n", string(v))
	for _, f := range []string{"kind/manifests/default-cni.yaml", "kind/manifests/default-storage.yaml", "etc/containerd/config.toml"} {
		require.FileExists(t, filepath.Join(root, f))
	}
	for _, u := range enabledUnits {
		l, err := os.Readlink(filepath.Join(root, "etc/systemd/system/multi-user.target.wants", u))
		require.NoError(t, err)
		require.Equal(t, "/etc/systemd/system/"+u, l)
	}
	for _, u := range maskedUnits {
		l, err := os.Readlink(filepath.Join(root, "etc/systemd/system", u))
		require.NoError(t, err)
		require.Equal(t, "/dev/null", l)
	}
}

// FuzzAptMirror: any sources file gives an http(s) archive that is not the
// security archive, or nothing; never a panic.
func FuzzAptMirror(f *testing.F) {
	f.Add("deb http://m.example/debian bookworm main\n")
	f.Add("Types: deb\nURIs: https://m.example/debian\n")
	f.Add("deb [a=b c=d] http://m.example/debian-security x\n")
	f.Fuzz(func(t *testing.T, text string) {
		p := filepath.Join(t.TempDir(), "sources")
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
		got := aptMirror(p)
		if got != "" {
			require.True(t, strings.HasPrefix(got, "http"), got)
			require.NotContains(t, got, "security")
		}
	})
}
