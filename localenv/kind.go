package localenv

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/kind/pkg/apis/config/defaults"
	"sigs.k8s.io/kind/pkg/cluster"
)

// kindNodeImage is the node image a kind environment creates its nodes from:
// $TENANTKIT_KIND_NODE_IMAGE, else kind's default. It must already be in the
// container engine's image store: Start never pulls it.
func kindNodeImage() string {
	if img := os.Getenv("TENANTKIT_KIND_NODE_IMAGE"); img != "" {
		return img
	}
	return defaults.Image
}

// startKind creates a kind cluster named after the environment directory and
// points the environment at it.
func (e *Env) startKind(ctx context.Context) error {
	engine, err := kindRuntimeAvailable(ctx)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrKindUnavailable, err)
	}
	image := kindNodeImage()
	if err := exec.CommandContext(ctx, engine, "image", "inspect", image).Run(); err != nil {
		return fmt.Errorf("%w: node image %s is not in %s's image store (Start never pulls it; load one with %s load, or name one with TENANTKIT_KIND_NODE_IMAGE)",
			ErrKindUnavailable, image, engine, engine)
	}
	provider := cluster.NewProvider()
	name := "tenantkit-" + filepath.Base(e.dir)[len("tenantkit-env-"):]
	if !e.ownsDir {
		name = "tenantkit"
	}
	e.kubecfg = filepath.Join(e.dir, "kind.kubeconfig")
	if err := provider.Create(name, cluster.CreateWithKubeconfigPath(e.kubecfg), cluster.CreateWithNodeImage(image)); err != nil {
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

// kindRuntimeAvailable returns the first container engine that answers, since
// kind's own detection only looks for the client binaries.
func kindRuntimeAvailable(ctx context.Context) (string, error) {
	for _, engine := range []string{"docker", "podman", "nerdctl"} {
		if _, err := exec.LookPath(engine); err != nil {
			continue
		}
		if err := exec.CommandContext(ctx, engine, "info").Run(); err == nil {
			return engine, nil
		}
	}
	return "", fmt.Errorf("no container engine answers (docker, podman or nerdctl info failed)")
}
