package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/pflag"
)

// Timeout is the --timeout flag every example has: how long the program
// may run before it gives up. Zero, the default, is no limit (Ctrl-C still
// stops it); a negative duration is a usage error.
type Timeout time.Duration

// AddFlag registers --timeout.
func (t *Timeout) AddFlag(fs *pflag.FlagSet) {
	fs.Var(t, "timeout", "give up after this long, e.g. 30m (0: no limit)")
}

// Context returns ctx bounded by the timeout, if one was set.
func (t Timeout) Context(ctx context.Context) (context.Context, context.CancelFunc) {
	if t <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, time.Duration(t))
}

// Set parses the flag's value (pflag.Value).
func (t *Timeout) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	if d < 0 {
		return fmt.Errorf("%s is negative (0 means no limit)", s)
	}
	*t = Timeout(d)
	return nil
}

// String returns the value as a duration (pflag.Value).
func (t *Timeout) String() string { return time.Duration(*t).String() }

// Type names the value in --help (pflag.Value).
func (t *Timeout) Type() string { return "duration" }
