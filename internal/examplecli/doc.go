// Package examplecli is the shared scaffolding of the programs under
// examples/, so that each example reads as a tutorial of its own package and
// not of flag plumbing.
//
// An example declares a [Target], which adds --kubeconfig and --context to its
// command. Without --kubeconfig the example runs against the embedded local
// environment (package localenv: real etcd and kube-apiserver processes on
// loopback); with it, against that real cluster:
//
//	var target examplecli.Target
//	cmd := &cobra.Command{Use: "gpu-share", RunE: func(cmd *cobra.Command, _ []string) error {
//		ctx := cmd.Context()
//		if err := target.Open(ctx, localenv.Config{}); err != nil {
//			return err
//		}
//		defer target.Close()
//		cs := kubernetes.NewForConfigOrDie(target.RESTConfig)
//		...
//	}}
//	target.AddFlags(cmd.Flags())
//	examplecli.Main(cmd)
//
// [Step] prints a progress line for work that may take more than a moment,
// [Table] prints results, and [Main] runs the command with a context
// cancelled on Ctrl-C and turns errors into the exit codes documented on
// [ExitFailure] and its siblings.
package examplecli
