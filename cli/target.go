package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Target decides where a tool runs: the embedded environment it passes to
// Open (the default) or the cluster of --kubeconfig.
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

	stop func() error // of the embedded environment; nil with --kubeconfig
}

// Embedded is how a tool starts the environment it runs on without
// --kubeconfig. cli knows no environment of its own: the examples start
// package localenv's, each in the configuration it needs, and keep the
// *localenv.Env they started.
type Embedded struct {
	// Components lists what Start starts, for the progress line
	// "starting the embedded local environment (Components)".
	Components string
	// Start starts the environment and returns its admin config and the
	// function that stops it. log is the Target's Logger; builds takes
	// whole lines about the servers a first run builds, printed above the
	// progress line.
	Start func(ctx context.Context, log *slog.Logger, builds io.Writer) (rc *rest.Config, stop func() error, err error)
}

// AddFlags registers --kubeconfig, --context and --verbose.
func (t *Target) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&t.Kubeconfig, "kubeconfig", "",
		"kubeconfig of a real cluster to work on; without it the example starts an embedded local environment")
	fs.StringVar(&t.Context, "context", "", "kubeconfig context to use (default: the current context)")
	fs.BoolVarP(&t.Verbose, "verbose", "v", false, "log progress details to stderr")
}

// Embedded reports whether the tool runs on the embedded environment (no
// --kubeconfig).
func (t *Target) Embedded() bool { return t.Kubeconfig == "" }

// Where names the target in messages: "the cluster of KUBECONFIG" (and
// its --context), or "the embedded environment".
func (t *Target) Where() string {
	switch {
	case t.Embedded():
		return "the embedded environment"
	case t.Context != "":
		return "the cluster of " + t.Kubeconfig + " (context " + t.Context + ")"
	}
	return "the cluster of " + t.Kubeconfig
}

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

// Open connects to the target. With --kubeconfig it loads the kubeconfig
// and checks that the cluster answers; embedded is not used, and a tool
// that works on real clusters only passes nil. Without --kubeconfig it
// starts embedded under a progress line (Close stops it); a nil embedded
// is then a usage error.
//
// A kubeconfig that cannot be loaded (missing, garbled, an unknown
// --context) is a usage error (ExitUsage: nothing was dialled); the other
// errors carry ExitUnavailable.
func (t *Target) Open(ctx context.Context, embedded *Embedded) error {
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
	if embedded == nil || embedded.Start == nil {
		return WithCode(ExitUsage, errors.New("--kubeconfig is required: this tool has no embedded environment"))
	}
	what := "starting the embedded local environment"
	if embedded.Components != "" {
		what += " (" + embedded.Components + ")"
	}
	step := Step(t.out(), what)
	rc, stop, err := embedded.Start(ctx, t.Logger(), Lines(t.out())) // first-run builds, above the step line
	step.Done(err)
	if err != nil {
		return WithCode(ExitUnavailable, err)
	}
	t.RESTConfig, t.stop = rc, stop
	return nil
}

// Close stops the embedded environment, if Open started one.
func (t *Target) Close() error {
	if t.stop == nil {
		return nil
	}
	step := Step(t.out(), "stopping the embedded local environment")
	err := t.stop()
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
