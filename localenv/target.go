package localenv

import (
	"context"
	"io"
	"log/slog"

	"k8s.io/client-go/rest"

	"github.com/cozystack/tenantkit/cli"
)

// OpenTarget opens a tool's cli.Target on a local environment of cfg when
// the tool runs without --kubeconfig (components name what it starts, for
// the progress line), and returns that environment; with --kubeconfig it
// opens the cluster and returns nil. cfg's Logger and BuildProgress are
// the target's. target.Close stops the environment.
func OpenTarget(ctx context.Context, target *cli.Target, components string, cfg Config) (*Env, error) {
	var env *Env
	err := target.Open(ctx, &cli.Embedded{Components: components,
		Start: func(ctx context.Context, log *slog.Logger, builds io.Writer) (*rest.Config, func() error, error) {
			cfg.Logger, cfg.BuildProgress = log, builds
			var err error
			if env, err = Start(ctx, cfg); err != nil {
				return nil, nil, err
			}
			return env.RESTConfig(), env.Stop, nil
		}})
	return env, err
}
