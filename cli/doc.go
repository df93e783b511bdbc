// Package cli holds the command-line conventions of tenantkit's tools (the
// programs under examples/ use it, and so can an integrator's own): choose
// the target cluster, exit with documented codes, print progress lines and
// tables, and give up after --timeout.
//
// A tool declares a [Target], which adds --kubeconfig, --context and
// --verbose to its command. With --kubeconfig the tool runs against that
// real cluster; without it, against the embedded environment it passes to
// [Target.Open] as an [Embedded]: the function that starts it, which Open
// calls under a progress line. cli needs nothing but client-go: the
// examples start package localenv's environment (real etcd and
// kube-apiserver processes on loopback) in that function and keep the
// *localenv.Env it returns, and a tool that works on real clusters only
// passes nil:
//
//	var target cli.Target
//	var timeout cli.Timeout
//	cmd := &cobra.Command{Use: "gpu-share", RunE: func(cmd *cobra.Command, _ []string) error {
//		ctx, cancel := timeout.Context(cmd.Context())
//		defer cancel()
//		embedded := &cli.Embedded{Components: "etcd, kube-apiserver",
//			Start: func(ctx context.Context, log *slog.Logger, builds io.Writer) (*rest.Config, func() error, error) {
//				env, err := localenv.Start(ctx, localenv.Config{Logger: log, BuildProgress: builds})
//				if err != nil {
//					return nil, nil, err
//				}
//				return env.RESTConfig(), env.Stop, nil
//			}}
//		if err := target.Open(ctx, embedded); err != nil {
//			return err // ExitUnavailable, or ExitUsage for a bad kubeconfig
//		}
//		defer target.Close()
//		cs, err := kubernetes.NewForConfig(target.RESTConfig)
//		...
//	}}
//	target.AddFlags(cmd.Flags())
//	timeout.AddFlag(cmd.Flags())
//	cli.Main(cmd)
//
// [Main] runs the command with a context cancelled on Ctrl-C or SIGTERM and
// ends the program with one of the documented exit codes:
//
//	0   ExitOK           done
//	1   ExitFailure      the operation ran and failed, or found a problem
//	2   ExitUsage        the command line or the kubeconfig is wrong (nothing was contacted)
//	3   ExitUnavailable  the cluster or the embedded environment could not be reached
//	130 ExitInterrupted  stopped by Ctrl-C or SIGTERM
//
// --help states them ([ExitCodesHelp]). An error chooses its code with
// [WithCode] or [Usage]; any other error is ExitFailure. [Execute] is Main
// without the signals and the exit, for tests.
//
// [Step] prints a progress line for work that may take more than a moment
// (redrawn in place on a terminal, a "still ..." line every 10 seconds in a
// log); [Lines] prints whole lines of background work above it; [Table]
// prints results as aligned columns. [Timeout] is the --timeout flag: 0, the
// default, is no limit.
package cli
