package localenv

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/kind/pkg/cluster"
)

// startKind creates a kind cluster named after the environment directory and
// points the environment at it.
func (e *Env) startKind(ctx context.Context) error {
	if err := kindRuntimeAvailable(ctx); err != nil {
		return fmt.Errorf("%w: %w", ErrKindUnavailable, err)
	}
	provider := cluster.NewProvider()
	name := "tenantkit-" + filepath.Base(e.dir)[len("tenantkit-env-"):]
	if !e.ownsDir {
		name = "tenantkit"
	}
	e.kubecfg = filepath.Join(e.dir, "kind.kubeconfig")
	if err := provider.Create(name, cluster.CreateWithKubeconfigPath(e.kubecfg)); err != nil {
		return fmt.Errorf("create kind cluster %s: %w", name, err)
	}
	e.OnStop(func() error { return provider.Delete(name, e.kubecfg) })
	rc, err := clientcmd.BuildConfigFromFlags("", e.kubecfg)
	if err != nil {
		return fmt.Errorf("kind kubeconfig: %w", err)
	}
	e.rest = rc
	return nil
}

// kindRuntimeAvailable checks that a container engine answers, since kind's
// own detection only looks for the client binaries.
func kindRuntimeAvailable(ctx context.Context) error {
	for _, engine := range []string{"docker", "podman", "nerdctl"} {
		if _, err := exec.LookPath(engine); err != nil {
			continue
		}
		if err := exec.CommandContext(ctx, engine, "info").Run(); err == nil {
			return nil
		}
	}
	return fmt.Errorf("no container engine answers (docker, podman or nerdctl info failed)")
}
