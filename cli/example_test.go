package cli_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"

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
// long it took. The time differs from run to run, so this example writes
// to a buffer and prints the lines with it left out.
func ExampleStep() {
	var out strings.Builder
	step := cli.Step(&out, "placing the pods")
	step.Done(nil) // "  ✓ placing the pods (1.2ms)"
	step = cli.Step(&out, "draining gpu-a100")
	step.Done(errors.New("pods left"))
	fmt.Print(regexp.MustCompile(`\(\d[^)]*\)`).ReplaceAllString(out.String(), "(elapsed)"))
	// Output:
	//   … placing the pods
	//   ✓ placing the pods (elapsed)
	//   … draining gpu-a100
	//   ✗ draining gpu-a100 (elapsed)
}

// Without --kubeconfig, Open starts the environment the tool passes (under
// a progress line on Out) and Close stops it; with --kubeconfig it is not
// started. The examples start package localenv's in Start:
//
//	env, err := localenv.Start(ctx, localenv.Config{Logger: log, BuildProgress: builds})
//	if err != nil {
//		return nil, nil, err
//	}
//	return env.RESTConfig(), env.Stop, nil
func ExampleTarget_Open() {
	embedded := &cli.Embedded{Components: "etcd, kube-apiserver",
		Start: func(ctx context.Context, log *slog.Logger, builds io.Writer) (*rest.Config, func() error, error) {
			stop := func() error { fmt.Println("stopped"); return nil }
			return &rest.Config{Host: "https://127.0.0.1:6443"}, stop, nil
		}}
	target := cli.Target{Out: io.Discard} // no --kubeconfig
	if err := target.Open(context.Background(), embedded); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("working on", target.RESTConfig.Host)
	_ = target.Close()
	// Output:
	// working on https://127.0.0.1:6443
	// stopped
}
