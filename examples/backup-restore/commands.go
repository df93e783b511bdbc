package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/cozystack/tenantkit/backup"
	"github.com/cozystack/tenantkit/internal/examplecli"
	"github.com/cozystack/tenantkit/internal/localenv"
)

// options are the flags shared by the commands.
type options struct {
	target    examplecli.Target
	namespace string
	timeout   time.Duration

	// Where the Bucket Secret is (the management cluster's tenant
	// namespace), for reading the bucket directly.
	bucketKubeconfig, bucketNamespace, bucket, bucketUser, prefix, caFile string
}

func (o *options) bucketFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.bucketKubeconfig, "bucket-kubeconfig", "", "kubeconfig of the cluster holding the Bucket Secret (default: --kubeconfig)")
	fs.StringVar(&o.bucketNamespace, "bucket-namespace", "", "namespace of the Bucket (the tenant namespace, e.g. tenant-example)")
	fs.StringVar(&o.bucket, "bucket", "", "name of the Bucket")
	fs.StringVar(&o.bucketUser, "bucket-user", "velero", "Bucket user whose credentials to read")
	fs.StringVar(&o.prefix, "prefix", "", "backup storage location prefix in the bucket")
	fs.StringVar(&o.caFile, "ca-file", "", "PEM CA to trust for the S3 endpoint")
}

// open connects to the tenant cluster (subcommands need --kubeconfig).
func (o *options) open(cmd *cobra.Command) (context.Context, context.CancelFunc, *backup.Client, error) {
	if o.target.Embedded() {
		return nil, nil, nil, examplecli.Usage("%s works on a real cluster: pass --kubeconfig (run without a subcommand for the embedded tour)", cmd.Name())
	}
	ctx, cancel := context.WithCancel(cmd.Context())
	if o.timeout > 0 {
		ctx, cancel = context.WithTimeout(cmd.Context(), o.timeout)
	}
	if err := o.target.Open(ctx, localenv.Config{}); err != nil {
		cancel()
		return nil, nil, nil, err
	}
	c, err := backup.New(o.target.RESTConfig, backup.Config{Namespace: o.namespace, Logger: o.target.Logger()})
	if err != nil {
		cancel()
		return nil, nil, nil, examplecli.WithCode(examplecli.ExitUnavailable, err)
	}
	return ctx, cancel, c, nil
}

// store opens the bucket with the credentials from the Bucket Secret.
func (o *options) store(ctx context.Context) (*backup.Store, error) {
	if o.bucketNamespace == "" || o.bucket == "" {
		return nil, examplecli.Usage("reading the bucket needs --bucket-namespace and --bucket")
	}
	path := o.bucketKubeconfig
	if path == "" {
		path = o.target.Kubeconfig
	}
	rc, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, examplecli.WithCode(examplecli.ExitUnavailable, fmt.Errorf("load %s: %w", path, err))
	}
	kube, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, examplecli.WithCode(examplecli.ExitUnavailable, err)
	}
	creds, err := backup.LoadCredentials(ctx, kube, o.bucketNamespace, o.bucket, o.bucketUser)
	if err != nil {
		return nil, err
	}
	var ca []byte
	if o.caFile != "" {
		if ca, err = os.ReadFile(o.caFile); err != nil {
			return nil, examplecli.Usage("read --ca-file: %v", err)
		}
	}
	return backup.NewStore(backup.StoreConfig{Credentials: creds, Prefix: o.prefix, CACertPEM: ca, Logger: o.target.Logger()})
}

func listCmd(o *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the cluster's backups (and, with --bucket, what the bucket holds)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel, c, err := o.open(cmd)
			if err != nil {
				return err
			}
			defer cancel()
			backups, err := c.Backups(ctx, "")
			if err != nil {
				return examplecli.WithCode(examplecli.ExitUnavailable, err)
			}
			inBucket := map[string]bool{}
			if o.bucket != "" {
				s, err := o.store(ctx)
				if err != nil {
					return err
				}
				names, err := s.ListBackups(ctx)
				if err != nil {
					return examplecli.WithCode(examplecli.ExitUnavailable, err)
				}
				for _, n := range names {
					inBucket[n] = true
				}
			}
			var rows [][]string
			for _, b := range backups {
				d := backup.Describe(&b)
				row := []string{d.Name, d.Phase, stamp(d.Started), fmt.Sprintf("%d/%d", d.ItemsDone, d.ItemsTotal), fmt.Sprint(d.Errors), fmt.Sprint(d.Warnings)}
				if o.bucket != "" {
					row = append(row, yesNo(inBucket[d.Name]))
				}
				rows = append(rows, row)
			}
			header := []string{"NAME", "PHASE", "STARTED", "ITEMS", "ERRORS", "WARNINGS"}
			if o.bucket != "" {
				header = append(header, "IN BUCKET")
			}
			examplecli.Table(os.Stdout, header, rows)
			return nil
		},
	}
	o.bucketFlags(cmd.Flags())
	return cmd
}

func verifyCmd(o *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "verify BACKUP",
		Short: "Verify a backup straight from the bucket (no Velero involved)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.target.Embedded() {
				return examplecli.Usage("verify works on a real cluster: pass --kubeconfig and the --bucket flags")
			}
			ctx := cmd.Context()
			s, err := o.store(ctx)
			if err != nil {
				return err
			}
			return verify(ctx, s, args[0])
		},
	}
	o.bucketFlags(cmd.Flags())
	return cmd
}

// verify runs Store.Verify with a progress line and prints the report.
func verify(ctx context.Context, s *backup.Store, name string) error {
	step := examplecli.Step(os.Stderr, "verifying "+name+" from s3://"+s.Bucket())
	rep, err := s.Verify(ctx, name, backup.VerifyOptions{})
	step.Done(err)
	if rep != nil {
		rows := [][]string{
			{"phase", rep.Phase}, {"format", rep.FormatVersion},
			{"items (archive / resource list)", fmt.Sprintf("%d / %d", rep.Items, rep.ListedItems)},
			{"archive", fmt.Sprintf("%d bytes (%d uncompressed)", rep.ArchiveBytes, rep.ContentBytes)},
		}
		for _, p := range rep.Problems {
			rows = append(rows, []string{"PROBLEM", p.String()})
		}
		for _, n := range rep.Notes {
			rows = append(rows, []string{"note", n})
		}
		examplecli.Table(os.Stdout, []string{"CHECK", "RESULT"}, rows)
	}
	if errors.Is(err, backup.ErrCorrupt) {
		return examplecli.WithCode(examplecli.ExitFailure, err)
	}
	if err != nil && !errors.Is(err, backup.ErrNotFound) {
		return examplecli.WithCode(examplecli.ExitUnavailable, err)
	}
	return err
}

func backupCmd(o *options) *cobra.Command {
	var namespaces []string
	var ttl time.Duration
	cmd := &cobra.Command{
		Use:   "backup NAME",
		Short: "Create a backup and wait for it, with progress",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, cancel, c, err := o.open(cmd)
			if err != nil {
				return err
			}
			defer cancel()
			if _, err := c.CreateBackup(ctx, backup.BackupOptions{Name: args[0], IncludedNamespaces: namespaces, TTL: ttl}); err != nil {
				return err
			}
			b, err := waitBackup(ctx, c, args[0])
			if b != nil {
				fmt.Print(backup.Describe(b))
			}
			return err
		},
	}
	cmd.Flags().StringSliceVar(&namespaces, "include-namespace", nil, "namespaces to back up (repeatable; default all)")
	cmd.Flags().DurationVar(&ttl, "ttl", 0, "keep the backup this long (default: Velero's 720h)")
	return cmd
}

func restoreCmd(o *options) *cobra.Command {
	var name string
	var mapping []string
	cmd := &cobra.Command{
		Use:   "restore BACKUP",
		Short: "Restore a backup and wait for it, with progress",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, cancel, c, err := o.open(cmd)
			if err != nil {
				return err
			}
			defer cancel()
			m := map[string]string{}
			for _, kv := range mapping {
				from, to, ok := strings.Cut(kv, ":")
				if !ok || from == "" || to == "" {
					return examplecli.Usage("--namespace-mapping wants from:to, got %q", kv)
				}
				m[from] = to
			}
			if name == "" {
				name = args[0] + "-" + time.Now().UTC().Format("20060102150405")
			}
			if _, err := c.CreateRestore(ctx, backup.RestoreOptions{Name: name, BackupName: args[0], NamespaceMapping: m}); err != nil {
				return err
			}
			return waitRestore(ctx, c, name)
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "restore name (default BACKUP-<timestamp>)")
	cmd.Flags().StringSliceVar(&mapping, "namespace-mapping", nil, "restore namespace from into to (from:to, repeatable)")
	return cmd
}
