// Command backup-restore walks through tenant backups with Velero and an S3
// Bucket, the way Cozystack's "Backups with the Velero addon" guide does,
// with package backup doing each step.
//
//	go run ./examples/backup-restore
//
// Without --kubeconfig it starts the embedded local environment (etcd,
// kube-apiserver, a versitygw S3 server and a real Velero v1.18.3 server
// with the AWS plugin), creates a Cozystack-shaped Bucket Secret, renders
// the addon values, backs a demo namespace up, verifies the backup straight
// from S3, deletes the namespace, restores it and shows that nothing
// differs. The first run builds the servers (minutes) and caches them.
//
// With --kubeconfig it works on a real tenant cluster running the Velero
// addon (namespace cozy-velero):
//
//	backup-restore list    --kubeconfig tenant.kubeconfig
//	backup-restore backup  --kubeconfig tenant.kubeconfig demo-1 --include-namespace demo
//	backup-restore restore --kubeconfig tenant.kubeconfig demo-1
//	backup-restore verify  --kubeconfig tenant.kubeconfig demo-1 \
//	    --bucket-kubeconfig mgmt.kubeconfig --bucket-namespace tenant-example --bucket velero-backups
//	backup-restore preview --kubeconfig tenant.kubeconfig demo-1 \
//	    --bucket-kubeconfig mgmt.kubeconfig --bucket-namespace tenant-example --bucket velero-backups
//	backup-restore check   --kubeconfig tenant.kubeconfig demo-1-restore \
//	    --bucket-kubeconfig mgmt.kubeconfig --bucket-namespace tenant-example --bucket velero-backups
//
// preview prints what a restore would do, item by item (create, exists
// identical, exists different, update, excluded, never restored) and
// changes nothing; check compares the cluster after a restore with the
// backup and prints Velero's own results. The tour runs both.
//
// Exit codes: 0 done, 1 failed (a backup that does not verify, a restore
// that failed, a check that finds items missing or different, a backup or
// restore that does not exist), 2 bad command line (names, policies, URLs
// and CA files checked before anything is contacted), 3 cluster or bucket
// unreachable, or no Velero API, 130 interrupted by the user.
package main

import (
	"github.com/spf13/cobra"

	"github.com/cozystack/tenantkit/cli"
)

func main() { cli.Main(newCommand()) }

// newCommand returns the program's command line, flags and subcommands
// (main runs it; the tests run it in process through cli.Execute).
func newCommand() *cobra.Command {
	o := &options{}
	root := &cobra.Command{
		Use:   "backup-restore",
		Short: "Back a namespace up with Velero to an S3 Bucket, verify it from S3 and restore it",
		Long: `backup-restore runs the whole tour on the embedded local environment: Bucket Secret,
addon values, Velero, backup with progress, verification straight from S3, namespace
deletion, restore and an empty diff.

With --kubeconfig, use the subcommands on a real tenant cluster with the Velero addon.`,
		Example: `  backup-restore
  backup-restore list    --kubeconfig tenant.kubeconfig --bucket-kubeconfig mgmt.kubeconfig --bucket-namespace tenant-example --bucket velero-backups
  backup-restore backup  --kubeconfig tenant.kubeconfig demo-1 --include-namespace demo
  backup-restore verify  --kubeconfig tenant.kubeconfig demo-1 --bucket-kubeconfig mgmt.kubeconfig --bucket-namespace tenant-example --bucket velero-backups
  backup-restore restore --kubeconfig tenant.kubeconfig demo-1`,
		Args: cobra.NoArgs,
		PersistentPreRun: func(cmd *cobra.Command, _ []string) {
			o.out, o.progress = cmd.OutOrStdout(), cmd.ErrOrStderr()
			o.target.Out = o.progress
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !o.target.Embedded() {
				return cli.Usage("with --kubeconfig, use a subcommand: list, verify, backup, restore, preview or check")
			}
			return runDemo(cmd.Context(), o)
		},
	}
	o.target.AddFlags(root.PersistentFlags())
	root.PersistentFlags().StringVar(&o.namespace, "velero-namespace", "cozy-velero", "namespace Velero runs in")
	o.timeout.AddFlag(root.PersistentFlags())
	root.AddCommand(listCmd(o), verifyCmd(o), backupCmd(o), restoreCmd(o), previewCmd(o), checkCmd(o))
	return root
}
