package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
)

// Exit codes shared by every example.
const (
	// ExitOK means the example did what it was asked.
	ExitOK = 0
	// ExitFailure means the operation ran and failed, or found a problem
	// (a token accepted where it must be rejected, a backup that does not
	// verify, a relocation that rolled back, a name that does not exist
	// (*NotFoundError), a dry run that would fail, a timeout).
	ExitFailure = 1
	// ExitUsage means the command line was wrong.
	ExitUsage = 2
	// ExitUnavailable means the target could not be reached: the embedded
	// environment did not start, or the --kubeconfig cluster did not answer.
	ExitUnavailable = 3
	// ExitInterrupted means the example was stopped with Ctrl-C or SIGTERM
	// (by the user; a timeout is ExitFailure).
	ExitInterrupted = 130
)

// ExitError carries the exit code an error should end the program with.
type ExitError struct {
	// Code is the exit code, one of the Exit constants.
	Code int
	// Err is the error to print.
	Err error
}

// Error returns Err's message.
func (e *ExitError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *ExitError) Unwrap() error { return e.Err }

// WithCode marks err to end the program with code; nil stays nil.
func WithCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &ExitError{Code: code, Err: err}
}

// Usage returns an error that ends the program with ExitUsage.
func Usage(format string, args ...any) error {
	return &ExitError{Code: ExitUsage, Err: fmt.Errorf(format, args...)}
}

// Main runs cmd with a context that is cancelled on SIGINT or SIGTERM,
// prints the error if any, and exits with its code: ExitUsage for flag
// errors, ExitInterrupted after a signal, the code of an *ExitError, and
// ExitFailure otherwise.
func Main(cmd *cobra.Command) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := Execute(ctx, cmd)
	stop()
	os.Exit(code)
}

// ExitCodesHelp is the paragraph Execute appends to the command's long
// help, so that --help states the exit codes.
const ExitCodesHelp = `Exit codes: 0 done, 1 the operation failed or found a problem (a name that
does not exist, a dry run that would fail, a timeout), 2 the command line or
the kubeconfig is wrong (nothing was contacted), 3 the cluster, issuer or
embedded environment could not be reached, 130 interrupted by the user.`

// Execute is Main without the signals and the exit: it runs cmd with ctx,
// prints the error, if any, to cmd's error output and returns the exit
// code Main would end the program with. Tests run an example's command
// line through it, in process.
//
// Wrong positional arguments and unknown subcommands, like flag errors,
// end with ExitUsage; an interrupted run says "interrupted" whatever the
// error it was interrupted in.
func Execute(ctx context.Context, cmd *cobra.Command) int {
	cmd.SilenceUsage = true
	cmd.SilenceErrors = true
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &ExitError{Code: ExitUsage, Err: fmt.Errorf("%w\n\n%s", err, c.UsageString())}
	})
	if !strings.Contains(cmd.Long, ExitCodesHelp) {
		cmd.Long = strings.TrimRight(cmd.Long, "\n") + "\n\n" + ExitCodesHelp
	}
	usageArgs(cmd)
	err := cmd.ExecuteContext(ctx)
	code := exitCode(ctx, err)
	switch {
	case code == ExitInterrupted:
		fmt.Fprintf(cmd.ErrOrStderr(), "%s: interrupted\n", cmd.Name())
		if err != nil && err.Error() != context.Canceled.Error() {
			fmt.Fprintf(cmd.ErrOrStderr(), "  stopped in: %v\n", err)
		}
	case err != nil:
		fmt.Fprintf(cmd.ErrOrStderr(), "%s: %v\n", cmd.Name(), err)
	}
	return code
}

// usageArgs makes the positional-argument check of cmd and its
// subcommands (cobra's "unknown command", "accepts 1 arg(s)") end with
// ExitUsage.
func usageArgs(cmd *cobra.Command) {
	check := cmd.Args
	if check == nil && cmd.HasSubCommands() {
		check = cobra.NoArgs // cobra's own default for a parent: unknown subcommands are refused
	}
	if check != nil {
		cmd.Args = func(c *cobra.Command, args []string) error {
			if err := check(c, args); err != nil {
				var ee *ExitError
				if errors.As(err, &ee) {
					return err
				}
				return &ExitError{Code: ExitUsage, Err: fmt.Errorf("%w\n\n%s", err, c.UsageString())}
			}
			return nil
		}
	}
	for _, sub := range cmd.Commands() {
		usageArgs(sub)
	}
}

func exitCode(ctx context.Context, err error) int {
	var ee *ExitError
	switch {
	case err == nil:
		return ExitOK
	case ctx.Err() != nil:
		return ExitInterrupted
	case errors.As(err, &ee):
		return ee.Code
	default:
		return ExitFailure
	}
}
