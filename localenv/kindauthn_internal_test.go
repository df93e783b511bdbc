package localenv

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/yaml"
)

// TestKindAuthnPatches applies the kubeadm patches as kind does (RFC 6902
// on the document kind generates, matched by group, version and kind) to
// the apiServer section of kind's v1beta4 (Kubernetes 1.36 and later) and
// v1beta3 templates: kind's own extraArgs stay, the flag and the volume
// are added.
func TestKindAuthnPatches(t *testing.T) {
	file := kindAuthnNodeDir + "/" + kindAuthnFile
	volume := []any{map[string]any{"name": kindAuthnVolume, "hostPath": kindAuthnNodeDir, "mountPath": kindAuthnNodeDir,
		"readOnly": true, "pathType": "Directory"}}
	tests := []struct {
		version string
		doc     string
		want    map[string]any
	}{
		{"v1beta4", `{"apiServer":{"certSANs":["localhost"],"extraArgs":[{"name":"runtime-config","value":""}]}}`,
			map[string]any{"certSANs": []any{"localhost"}, "extraVolumes": volume, "extraArgs": []any{
				map[string]any{"name": "runtime-config", "value": ""},
				map[string]any{"name": "authentication-config", "value": file}}}},
		{"v1beta3", `{"apiServer":{"certSANs":["localhost"],"extraArgs":{"runtime-config":""}}}`,
			map[string]any{"certSANs": []any{"localhost"}, "extraVolumes": volume, "extraArgs": map[string]any{
				"runtime-config": "", "authentication-config": file}}},
	}
	patches := kindAuthnPatches()
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			var applied int
			doc := []byte(tt.doc)
			for _, p := range patches {
				if p.Group != "kubeadm.k8s.io" || p.Kind != "ClusterConfiguration" || p.Version != tt.version {
					continue
				}
				applied++
				js, err := yaml.YAMLToJSON([]byte(p.Patch))
				require.NoError(t, err)
				patch, err := jsonpatch.DecodePatch(js)
				require.NoError(t, err)
				doc, err = patch.Apply(doc)
				require.NoError(t, err)
			}
			require.Equal(t, 1, applied)
			var got struct {
				APIServer map[string]any `json:"apiServer"`
			}
			require.NoError(t, json.Unmarshal(doc, &got))
			require.Equal(t, tt.want, got.APIServer)
		})
	}
}

// TestAddKindAuthn: the configuration is written into the environment's
// folder, mounted into the control-plane node only, and the patches are
// added; nil changes nothing.
func TestAddKindAuthn(t *testing.T) {
	nodes := func() []v1alpha4.Node {
		return []v1alpha4.Node{{Role: v1alpha4.ControlPlaneRole}, {Role: v1alpha4.WorkerRole}}
	}
	e := &Env{dir: t.TempDir()}
	cfg := &v1alpha4.Cluster{Nodes: nodes()}
	require.NoError(t, e.addKindAuthn(cfg))
	require.Equal(t, &v1alpha4.Cluster{Nodes: nodes()}, cfg, "nil AuthenticationConfig")

	data := []byte("apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\n")
	e.cfg.KindCluster.AuthenticationConfig = data
	require.NoError(t, e.addKindAuthn(cfg))
	require.Equal(t, []v1alpha4.Mount{{HostPath: e.kindAuthnDir(), ContainerPath: kindAuthnNodeDir, Readonly: true}}, cfg.Nodes[0].ExtraMounts)
	require.Empty(t, cfg.Nodes[1].ExtraMounts)
	require.Equal(t, kindAuthnPatches(), cfg.KubeadmConfigPatchesJSON6902)
	got, err := os.ReadFile(filepath.Join(e.kindAuthnDir(), kindAuthnFile))
	require.NoError(t, err)
	require.Equal(t, data, got)
	entries, err := os.ReadDir(e.kindAuthnDir())
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary file left")
}

func TestHostAddressIn(t *testing.T) {
	ipnet := func(s string) net.Addr {
		ip, n, err := net.ParseCIDR(s)
		require.NoError(t, err)
		n.IP = ip
		return n
	}
	addrs := []net.Addr{ipnet("127.0.0.1/8"), ipnet("192.0.2.2/24"), ipnet("fc00:f853:ccd:e793::1/64"), ipnet("172.18.0.1/16")}
	tests := []struct {
		name    string
		subnets []string
		want    string
	}{
		{"the network's gateway", []string{"172.18.0.0/16"}, "172.18.0.1"},
		{"not this host's", []string{"172.19.0.0/16"}, ""},
		{"none", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var subnets []netip.Prefix
			for _, s := range tt.subnets {
				subnets = append(subnets, netip.MustParsePrefix(s))
			}
			got, ok := hostAddressIn(subnets, addrs)
			require.Equal(t, tt.want != "", ok)
			if ok {
				require.Equal(t, tt.want, got.String())
			}
		})
	}
}

// TestAuthnReloads reads the apiserver's authentication config metrics.
func TestAuthnReloads(t *testing.T) {
	const metrics = `# HELP apiserver_authentication_config_controller_automatic_reloads_total [BETA] Total number of automatic reloads
# TYPE apiserver_authentication_config_controller_automatic_reloads_total counter
apiserver_authentication_config_controller_automatic_reloads_total{apiserver_id_hash="sha256:aa",status="failure"} 2
apiserver_authentication_config_controller_automatic_reloads_total{apiserver_id_hash="sha256:aa",status="success"} 5
# TYPE apiserver_authentication_config_controller_last_config_info gauge
apiserver_authentication_config_controller_last_config_info{apiserver_id_hash="sha256:aa",hash="sha256:bb"} 1
apiserver_request_total{code="200"} 9
`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.Equal(t, "/metrics", r.URL.Path)
		_, _ = w.Write([]byte(metrics))
	}))
	defer srv.Close()
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	require.NoError(t, err)
	got, err := authnReloads(context.Background(), cs)
	require.NoError(t, err)
	require.Equal(t, authnReload{failures: 2,
		configInfo: `apiserver_authentication_config_controller_last_config_info{apiserver_id_hash="sha256:aa",hash="sha256:bb"} 1` + "\n"}, got)
}

// TestKindAuthnUnsupported: only a kind cluster started with an
// authentication configuration takes a new one.
func TestKindAuthnUnsupported(t *testing.T) {
	for _, e := range []*Env{{provider: Local}, {provider: Kind, kindName: "x"}} {
		err := e.SetKindAuthenticationConfig(context.Background(), []byte("x"))
		require.True(t, errors.Is(err, ErrUnsupported), err)
	}
	_, err := (&Env{provider: Local}).KindHostAddress(context.Background())
	require.ErrorIs(t, err, ErrUnsupported)
}
