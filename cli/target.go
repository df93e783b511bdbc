package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/cozystack/tenantkit/localenv"
)

// Target decides where an example runs: the embedded local environment
// (the default) or the cluster of --kubeconfig.
type Target struct {
	// Kubeconfig is set from --kubeconfig.
	Kubeconfig string
	// Context is set from --context.
	Context string
	// Verbose is set from --verbose: log progress details to stderr.
	Verbose bool
	// Out receives progress lines. Default: os.Stderr.
	Out io.Writer

	// RESTConfig is set by Open: the admin config of the embedded
	// environment, or the one loaded from the kubeconfig.
	RESTConfig *rest.Config
	// Env is set by Open in embedded mode; nil with --kubeconfig.
	Env *localenv.Env
}

// AddFlags registers --kubeconfig, --context and --verbose.
func (t *Target) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&t.Kubeconfig, "kubeconfig", "",
		"kubeconfig of a real cluster to work on; without it the example starts an embedded local environment")
	fs.StringVar(&t.Context, "context", "", "kubeconfig context to use (default: the current context)")
	fs.BoolVarP(&t.Verbose, "verbose", "v", false, "log progress details to stderr")
}

// Embedded reports whether the example runs on the embedded environment.
func (t *Target) Embedded() bool { return t.Kubeconfig == "" }

// Logger returns a logger to stderr with --verbose, a silent one otherwise.
func (t *Target) Logger() *slog.Logger {
	if !t.Verbose {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func (t *Target) out() io.Writer {
	if t.Out != nil {
		return t.Out
	}
	return os.Stderr
}

// Open connects to the target. In embedded mode it starts a local
// environment configured by cfg (the first run builds the servers it needs,
// each reported on a line of its own above the step line); with --kubeconfig it loads the kubeconfig and checks that the cluster
// answers. A kubeconfig that cannot be loaded (missing, garbled, an
// unknown --context) is a usage error (ExitUsage: nothing was dialled);
// the other errors carry ExitUnavailable.
func (t *Target) Open(ctx context.Context, cfg localenv.Config) error {
	if !t.Embedded() {
		rc, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
			&clientcmd.ClientConfigLoadingRules{ExplicitPath: t.Kubeconfig},
			&clientcmd.ConfigOverrides{CurrentContext: t.Context}).ClientConfig()
		if err != nil {
			return WithCode(ExitUsage, fmt.Errorf("load kubeconfig %s: %w", t.Kubeconfig, err))
		}
		if err := reachable(ctx, rc); err != nil {
			return WithCode(ExitUnavailable, fmt.Errorf("cluster of %s does not answer: %w", t.Kubeconfig, err))
		}
		t.RESTConfig = rc
		return nil
	}
	if cfg.Logger == nil {
		cfg.Logger = t.Logger()
	}
	if cfg.BuildProgress == nil {
		cfg.BuildProgress = Lines(t.out()) // first-run builds, above the step line
	}
	what := "starting the embedded local environment (etcd, kube-apiserver)"
	if cfg.SkipAPIServer {
		what = "starting the embedded local environment (etcd)"
	}
	if cfg.Cluster != nil {
		what = "starting the embedded local environment (etcd, kube-apiserver, controller manager, scheduler, simulated nodes)"
	}
	step := Step(t.out(), what)
	env, err := localenv.Start(ctx, cfg)
	step.Done(err)
	if err != nil {
		return WithCode(ExitUnavailable, err)
	}
	t.Env, t.RESTConfig = env, env.RESTConfig()
	return nil
}

// Close stops the embedded environment, if one was started.
func (t *Target) Close() error {
	if t.Env == nil {
		return nil
	}
	step := Step(t.out(), "stopping the embedded local environment")
	err := t.Env.Stop()
	step.Done(err)
	return err
}

// reachable asks the apiserver for /version, bounded to 15 seconds.
func reachable(ctx context.Context, rc *rest.Config) error {
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	return cs.Discovery().RESTClient().Get().AbsPath("/version").Do(ctx).Error()
}
