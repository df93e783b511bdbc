package localenv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"

	"github.com/cozystack/tenantkit/internal/serverbin"
)

// StartScheduler starts one more kube-scheduler (the version Start builds
// for clusters) against the environment's first apiserver, configured by
// config, a KubeSchedulerConfiguration in YAML
// (kubescheduler.config.k8s.io/v1) such as one with scheduler extenders.
// StartScheduler sets its clientConnection.kubeconfig to credentials of
// its own (user system:kube-scheduler) and turns leader election off; the
// rest is config's. name tells it apart: it runs in directory
// "kube-scheduler-<name>" and is tracked as a Component of that name.
// When the cluster's own kube-scheduler runs too, give config's profiles
// scheduler names of their own. Env.Stop stops it.
func (e *Env) StartScheduler(ctx context.Context, name string, config []byte) error {
	if e.isStopped() {
		return ErrStopped
	}
	as := e.APIServers()
	if len(as) == 0 {
		return fmt.Errorf("%w: a scheduler needs an apiserver", ErrUnsupported)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(config, &doc); err != nil || doc == nil {
		return fmt.Errorf("%w: scheduler config: not a YAML mapping: %v", ErrInvalidConfig, err)
	}
	sched := controlPlaneComponent{
		server: serverbin.KubeScheduler,
		user:   "system:kube-scheduler",
		name:   serverbin.KubeScheduler.Name + "-" + name,
	}
	var werr error
	sched.flags = func(dir string) []string {
		doc["clientConnection"] = map[string]any{"kubeconfig": filepath.Join(dir, "kubeconfig")}
		doc["leaderElection"] = map[string]any{"leaderElect": false}
		path := filepath.Join(dir, "config.yaml")
		data, err := yaml.Marshal(doc)
		if err == nil {
			err = os.WriteFile(path, data, 0o600)
		}
		werr = err
		return []string{"--config=" + path}
	}
	if err := e.bins.prepare(ctx, sched.server); err != nil {
		return err
	}
	err := e.startControlPlaneComponent(ctx, as[0], sched)
	if werr != nil {
		return fmt.Errorf("start %s: write config: %w", sched.name, werr)
	}
	return err
}
