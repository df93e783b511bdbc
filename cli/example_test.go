package cli_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/cozystack/tenantkit/cli"
)

// A tool's command runs through Execute (Main in a real program): an error
// marked with a code ends the program with that code, a wrong command line
// with ExitUsage.
func ExampleExecute() {
	var timeout cli.Timeout
	cmd := &cobra.Command{Use: "tool", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := timeout.Context(cmd.Context())
			defer cancel()
			_ = ctx // the work, bounded by --timeout
			return cli.WithCode(cli.ExitUnavailable, errors.New("the cluster does not answer"))
		}}
	timeout.AddFlag(cmd.Flags())
	cmd.SetErr(os.Stdout)

	cmd.SetArgs(nil)
	fmt.Println("exit", cli.Execute(context.Background(), cmd))
	cmd.SetErr(io.Discard) // the message, then the usage
	cmd.SetArgs([]string{"--timeout", "-1s"})
	fmt.Println("exit", cli.Execute(context.Background(), cmd))
	// Output:
	// tool: the cluster does not answer
	// exit 3
	// exit 2
}

// Table prints results as aligned columns.
func ExampleTable() {
	cli.Table(os.Stdout, []string{"NODE", "GPUS"}, [][]string{{"gpu-a100", "2"}, {"gpu-t4", "4"}})
	// Output:
	// NODE      GPUS
	// gpu-a100  2
	// gpu-t4    4
}

// Step prints a progress line and, when the work ends, its outcome and how
// long it took.
func ExampleStep() {
	step := cli.Step(os.Stdout, "placing the pods")
	step.Done(nil) // prints "  ✓ placing the pods (…)" with the elapsed time
}
