package localenv_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/cozystack/tenantkit/internal/serverbin"
	"github.com/cozystack/tenantkit/localenv"
)

// TestBinaries_overridesBuildNothing: binaries from envtest's
// KUBEBUILDER_ASSETS (here tenantkit's cached builds, laid out as
// setup-envtest lays out its own) or from TENANTKIT_<NAME>_BIN start the
// environment with building disabled and an empty build cache, and the
// version each reports is checked: the pinned one silently, another minor
// with a warning, another major refused.
func TestBinaries_overridesBuildNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts real servers (skipped with -short)")
	}
	real := map[string]string{}
	for _, s := range []serverbin.Server{serverbin.Etcd, serverbin.KubeAPIServer, serverbin.Dex} {
		p, err := serverbin.Path(t.Context(), s)
		require.NoError(t, err)
		real[s.Name] = p
	}
	assets := t.TempDir()
	for _, name := range []string{"etcd", "kube-apiserver"} {
		require.NoError(t, os.Symlink(real[name], filepath.Join(assets, name)))
	}
	// kube-apiserver claiming another version, otherwise the real one.
	claims := func(version string) string {
		p := filepath.Join(t.TempDir(), "kube-apiserver")
		script := fmt.Sprintf("#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'Kubernetes %s'; exit 0; fi\nexec %s \"$@\"\n", version, real["kube-apiserver"])
		require.NoError(t, os.WriteFile(p, []byte(script), 0o755))
		return p
	}
	for _, tt := range []struct {
		name        string
		apiserver   string // TENANTKIT_KUBE_APISERVER_BIN
		wantVersion string
		wantWarning bool
		wantErr     error
	}{
		{name: "setup-envtest layout", wantVersion: serverbin.KubeAPIServer.Version},
		{name: "another minor version", apiserver: claims("v1.36.4"), wantVersion: "v1.36.4", wantWarning: true},
		{name: "another major version", apiserver: claims("v2.0.0"), wantErr: localenv.ErrIncompatibleBinary},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cache := t.TempDir()
			t.Setenv(serverbin.KubebuilderAssetsEnv, assets)
			t.Setenv("TENANTKIT_CACHE_DIR", cache)
			t.Setenv(serverbin.NoBuildEnv, "1")
			t.Setenv(serverbin.KubeAPIServer.EnvVar(), tt.apiserver)
			t.Setenv(serverbin.Dex.EnvVar(), real["dex"])
			var logs syncBuffer
			cfg := localenv.Config{EtcdMembers: 1, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
			if tt.wantErr != nil {
				env, err := localenv.Start(t.Context(), cfg)
				if env != nil {
					env.Stop()
				}
				require.ErrorIs(t, err, tt.wantErr)
				return
			}
			env := localenv.StartT(t, cfg)
			_, err := kubernetes.NewForConfigOrDie(env.RESTConfig()).CoreV1().Namespaces().Get(t.Context(), "default", metav1.GetOptions{})
			require.NoError(t, err)
			_, err = env.StartDex(t.Context(), localenv.DexConfig{})
			require.NoError(t, err)

			versions := map[string]string{}
			for _, c := range env.Components() {
				versions[c.Name] = c.Version
			}
			require.Equal(t, tt.wantVersion, versions["kube-apiserver"])
			require.Equal(t, serverbin.Dex.Version, versions["dex"])
			require.Equal(t, tt.wantWarning, bytes.Contains(logs.Bytes(), []byte("level=WARN")), logs.String())
			entries, err := os.ReadDir(cache)
			require.NoError(t, err)
			require.Empty(t, entries, "nothing built or locked in the build cache")
		})
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) Bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Clone(s.b.Bytes())
}

func (s *syncBuffer) String() string { return string(s.Bytes()) }
