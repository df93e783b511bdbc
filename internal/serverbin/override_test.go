package serverbin_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cozystack/tenantkit/internal/serverbin"
)

// script writes an executable shell script that prints out.
func script(t *testing.T, dir, name, out string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\necho '"+out+"'\n"), 0o755))
	return p
}

func TestOverride(t *testing.T) {
	assets := t.TempDir()
	script(t, assets, "kube-apiserver", "Kubernetes v1.33.0")
	mine := script(t, t.TempDir(), "apiserver", "Kubernetes v1.37.2")
	envtestOne := script(t, t.TempDir(), "apiserver", "Kubernetes v1.34.1")
	s := serverbin.KubeAPIServer
	require.Equal(t, "TENANTKIT_KUBE_APISERVER_BIN", s.EnvVar())
	require.Equal(t, "TEST_ASSET_KUBE_APISERVER", s.EnvtestVar())
	require.Equal(t, "TENANTKIT_VELERO_PLUGIN_FOR_AWS_BIN", serverbin.VeleroPluginAWS.EnvVar())

	for _, tt := range []struct {
		name       string
		env        map[string]string
		envtest    bool
		wantPath   string
		wantSource string
	}{
		{"nothing set", nil, true, "", ""},
		{"KUBEBUILDER_ASSETS", map[string]string{"KUBEBUILDER_ASSETS": assets}, true, filepath.Join(assets, "kube-apiserver"), "KUBEBUILDER_ASSETS"},
		{"KUBEBUILDER_ASSETS without the binary", map[string]string{"KUBEBUILDER_ASSETS": t.TempDir()}, true, "", ""},
		{"TEST_ASSET_ before KUBEBUILDER_ASSETS", map[string]string{"KUBEBUILDER_ASSETS": assets, "TEST_ASSET_KUBE_APISERVER": envtestOne}, true, envtestOne, "TEST_ASSET_KUBE_APISERVER"},
		{"TENANTKIT_ before envtest's", map[string]string{"KUBEBUILDER_ASSETS": assets, "TEST_ASSET_KUBE_APISERVER": envtestOne, "TENANTKIT_KUBE_APISERVER_BIN": mine}, true, mine, "TENANTKIT_KUBE_APISERVER_BIN"},
		{"envtest's ignored where tenantkit's build is needed", map[string]string{"KUBEBUILDER_ASSETS": assets, "TEST_ASSET_KUBE_APISERVER": envtestOne}, false, "", ""},
		{"TENANTKIT_ still applies there", map[string]string{"KUBEBUILDER_ASSETS": assets, "TENANTKIT_KUBE_APISERVER_BIN": mine}, false, mine, "TENANTKIT_KUBE_APISERVER_BIN"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, v := range []string{"KUBEBUILDER_ASSETS", "TEST_ASSET_KUBE_APISERVER", "TENANTKIT_KUBE_APISERVER_BIN"} {
				t.Setenv(v, tt.env[v])
			}
			path, source, ok := serverbin.Override(s, tt.envtest)
			require.Equal(t, tt.wantPath != "", ok)
			require.Equal(t, tt.wantPath, path)
			require.Equal(t, tt.wantSource, source)
		})
	}
}

func TestCheckBinary(t *testing.T) {
	dir := t.TempDir()
	notExec := filepath.Join(dir, "not-executable")
	require.NoError(t, os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644))
	for _, tt := range []struct {
		name        string
		server      serverbin.Server
		path        string
		wantVersion string
		wantErr     error
	}{
		{"the pinned version", serverbin.KubeAPIServer, script(t, dir, "a", "Kubernetes v1.37.2"), "v1.37.2", nil},
		{"an older minor (setup-envtest's)", serverbin.KubeAPIServer, script(t, dir, "b", "Kubernetes v1.33.0"), "v1.33.0", nil},
		{"a newer minor", serverbin.KubeScheduler, script(t, dir, "c", "Kubernetes v1.38.0-alpha.1"), "v1.38.0", nil},
		{"older than MinVersion", serverbin.KubeAPIServer, script(t, dir, "d", "Kubernetes v1.19.16"), "v1.19.16", serverbin.ErrIncompatible},
		{"another major version", serverbin.KubeControllerManager, script(t, dir, "e", "Kubernetes v2.0.0"), "v2.0.0", serverbin.ErrIncompatible},
		{"etcd's format", serverbin.Etcd, script(t, dir, "f", "etcd Version: 3.5.21\nGit SHA: a17edfd\nGo Version: go1.23.7"), "v3.5.21", nil},
		{"etcd 3.3", serverbin.Etcd, script(t, dir, "g", "etcd Version: 3.3.27"), "v3.3.27", serverbin.ErrIncompatible},
		{"dex's format", serverbin.Dex, script(t, dir, "h", "dex v2.41.1"), "v2.41.1", nil},
		{"velero's format", serverbin.Velero, script(t, dir, "i", "Client:\n\tVersion: v1.17.0\n\tGit commit: abc"), "v1.17.0", nil},
		{"no version in the output", serverbin.KubeAPIServer, script(t, dir, "j", "unknown"), "", nil},
		{"no version command", serverbin.VeleroPluginAWS, script(t, dir, "k", "v9.9.9"), "", nil},
		{"missing file", serverbin.Dex, filepath.Join(dir, "nonexistent"), "", serverbin.ErrBadOverride},
		{"not executable", serverbin.Dex, notExec, "", serverbin.ErrBadOverride},
		{"a folder", serverbin.Dex, dir, "", serverbin.ErrBadOverride},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v, err := serverbin.CheckBinary(t.Context(), tt.server, tt.path)
			require.ErrorIs(t, err, tt.wantErr)
			if tt.wantErr == nil {
				require.NoError(t, err)
			}
			require.Equal(t, tt.wantVersion, v)
		})
	}
}
