package localenv

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
)

// The structured authentication configuration of a kind cluster
// (KindConfig.AuthenticationConfig) lives in a folder of the environment,
// mounted into the control-plane node at kindAuthnNodeDir and from there
// into the kube-apiserver pod (kubeadm's apiServer.extraVolumes), which
// reads kindAuthnFile with --authentication-config. A folder rather than
// the file: Env.SetKindAuthenticationConfig replaces the file by a rename,
// which a mount of the file itself would not show.
const (
	kindAuthnNodeDir = "/etc/tenantkit/authentication"
	kindAuthnFile    = "authentication-config.yaml"
	kindAuthnVolume  = "tenantkit-authentication"
)

// kindAuthnPatches are kubeadm ClusterConfiguration patches (RFC 6902, so
// that kind's own apiServer.extraArgs stay) that give the apiserver the
// flag and the volume: extraArgs is a list of name/value pairs in v1beta4
// (kind uses it from Kubernetes 1.36), a map in v1beta3 (before).
func kindAuthnPatches() []v1alpha4.PatchJSON6902 {
	file := kindAuthnNodeDir + "/" + kindAuthnFile
	volume := fmt.Sprintf(`- op: add
  path: /apiServer/extraVolumes
  value:
  - name: %s
    hostPath: %s
    mountPath: %s
    readOnly: true
    pathType: Directory
`, kindAuthnVolume, kindAuthnNodeDir, kindAuthnNodeDir)
	return []v1alpha4.PatchJSON6902{
		{Group: "kubeadm.k8s.io", Version: "v1beta4", Kind: "ClusterConfiguration", Patch: fmt.Sprintf(`- op: add
  path: /apiServer/extraArgs/-
  value:
    name: authentication-config
    value: %s
`, file) + volume},
		{Group: "kubeadm.k8s.io", Version: "v1beta3", Kind: "ClusterConfiguration", Patch: fmt.Sprintf(`- op: add
  path: /apiServer/extraArgs/authentication-config
  value: %s
`, file) + volume},
	}
}

// addKindAuthn writes the initial configuration into the environment's
// folder and adds the mount and the kubeadm patches to cfg; nothing when
// KindConfig.AuthenticationConfig is nil.
func (e *Env) addKindAuthn(cfg *v1alpha4.Cluster) error {
	data := e.cfg.KindCluster.AuthenticationConfig
	if data == nil {
		return nil
	}
	dir := e.kindAuthnDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("localenv: %w", err)
	}
	if err := writeFileAtomic(filepath.Join(dir, kindAuthnFile), data); err != nil {
		return fmt.Errorf("localenv: authentication config: %w", err)
	}
	cp := &cfg.Nodes[0]
	cp.ExtraMounts = append(cp.ExtraMounts, v1alpha4.Mount{HostPath: dir, ContainerPath: kindAuthnNodeDir, Readonly: true})
	cfg.KubeadmConfigPatchesJSON6902 = append(cfg.KubeadmConfigPatchesJSON6902, kindAuthnPatches()...)
	return nil
}

func (e *Env) kindAuthnDir() string { return filepath.Join(e.dir, "kind-authentication") }

// SetKindAuthenticationConfig replaces the structured authentication
// configuration (an AuthenticationConfiguration document) that the kind
// cluster's kube-apiserver reads, and waits until the apiserver has loaded
// it: kube-apiserver reloads the file by itself (on the file's change, at
// the latest a minute later) once the new configuration validates and each
// of its JWT issuers answers, and then shows the configuration's hash in
// its metrics. So when it returns, tokens of the new issuers authenticate.
//
// An issuer must be reachable from the control-plane node: a server of
// this host listening on KindHostAddress, such as StartDex's on a kind
// environment. The anonymous section cannot change (the apiserver's rule).
//
// It returns ErrUnsupported unless the environment is a kind cluster
// started with KindConfig.AuthenticationConfig, and an error quoting the
// apiserver's log when the apiserver refuses the configuration. Without a
// deadline on ctx it waits at most 3 minutes.
func (e *Env) SetKindAuthenticationConfig(ctx context.Context, data []byte) error {
	if e.provider != Kind || e.cfg.KindCluster.AuthenticationConfig == nil {
		return fmt.Errorf("%w: SetKindAuthenticationConfig needs the kind provider and KindConfig.AuthenticationConfig", ErrUnsupported)
	}
	if e.isStopped() {
		return ErrStopped
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 3*time.Minute)
		defer cancel()
	}
	cs, err := kubernetes.NewForConfig(e.rest)
	if err != nil {
		return fmt.Errorf("localenv: %w", err)
	}
	before, err := authnReloads(ctx, cs)
	if err != nil {
		return err
	}
	if err := writeFileAtomic(filepath.Join(e.kindAuthnDir(), kindAuthnFile), data); err != nil {
		return fmt.Errorf("localenv: authentication config: %w", err)
	}
	want := fmt.Sprintf(`hash="sha256:%x"`, sha256.Sum256(data))
	begin := time.Now()
	for {
		now, err := authnReloads(ctx, cs)
		switch {
		case err != nil:
			return err
		case strings.Contains(now.configInfo, want):
			e.log.Info("kind apiserver loaded the authentication config", "took", time.Since(begin).Round(time.Second))
			return nil
		case now.failures > before.failures:
			return fmt.Errorf("localenv: the kind apiserver refused the authentication config: %s", e.apiserverAuthnLog(ctx, cs))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("localenv: the kind apiserver has not loaded the authentication config: %w; its log: %s", ctx.Err(), e.apiserverAuthnLog(context.WithoutCancel(ctx), cs))
		case <-time.After(time.Second):
		}
	}
}

// authnReload is what the apiserver's metrics say of its authentication
// configuration.
type authnReload struct {
	// configInfo is the last_config_info line, with the loaded
	// configuration's hash.
	configInfo string
	// failures counts the automatic reloads that failed.
	failures float64
}

// authnReloads reads the apiserver's authentication config metrics.
func authnReloads(ctx context.Context, cs kubernetes.Interface) (authnReload, error) {
	body, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return authnReload{}, fmt.Errorf("localenv: kind apiserver metrics: %w", err)
	}
	const prefix = "apiserver_authentication_config_controller_"
	var r authnReload
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, prefix+"last_config_info{"):
			r.configInfo += l + "\n"
		case strings.HasPrefix(l, prefix+"automatic_reloads_total{") && strings.Contains(l, `status="failure"`):
			f := strings.Fields(l)
			n, _ := strconv.ParseFloat(f[len(f)-1], 64)
			r.failures += n
		}
	}
	return r, sc.Err()
}

// apiserverAuthnLog returns the apiserver's last log lines about its
// authentication configuration.
func (e *Env) apiserverAuthnLog(ctx context.Context, cs kubernetes.Interface) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	tail := int64(400)
	pod := "kube-apiserver-" + e.kindName + "-control-plane"
	out, err := cs.CoreV1().Pods("kube-system").GetLogs(pod, &corev1.PodLogOptions{TailLines: &tail}).DoRaw(ctx)
	if err != nil {
		return fmt.Sprintf("(pod %s's log: %v)", pod, err)
	}
	var lines []string
	for l := range strings.Lines(string(out)) {
		if strings.Contains(l, "authentication config") || strings.Contains(l, "jwt") || strings.Contains(l, "oidc") {
			lines = append(lines, strings.TrimSpace(l))
		}
	}
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	if len(lines) == 0 {
		return "(nothing about the authentication config in pod " + pod + "'s log)"
	}
	return strings.Join(lines, " | ")
}

// writeFileAtomic writes data to a new file beside path and renames it
// over path: a reader sees the old content or the new, never a part.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path))
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
