package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	velerov1 "github.com/vmware-tanzu/velero/pkg/apis/velero/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/cozystack/tenantkit/backup"
	"github.com/cozystack/tenantkit/cli"
)

// options are the flags shared by the commands, and where they print.
type options struct {
	target    cli.Target
	namespace string
	timeout   cli.Timeout

	// Where the Bucket Secret is (the management cluster's tenant
	// namespace), for reading the bucket directly.
	bucketKubeconfig, bucketNamespace, bucket, bucketUser, prefix, caFile string

	// verify's other sources: a copy of the bucket on disk, or an S3
	// endpoint and bucket (keys from AWS_ACCESS_KEY_ID and
	// AWS_SECRET_ACCESS_KEY).
	dir, s3Endpoint, s3Bucket string

	// out receives results (tables, descriptions); progress receives
	// progress lines. Set from the command's outputs before it runs.
	out, progress io.Writer
}

func (o *options) bucketFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.bucketKubeconfig, "bucket-kubeconfig", "", "kubeconfig of the cluster holding the Bucket Secret (default: --kubeconfig and --context)")
	fs.StringVar(&o.bucketNamespace, "bucket-namespace", "", "namespace of the Bucket (the tenant namespace, e.g. tenant-example)")
	fs.StringVar(&o.bucket, "bucket", "", "name of the Bucket")
	fs.StringVar(&o.bucketUser, "bucket-user", "velero", "Bucket user whose credentials to read")
	fs.StringVar(&o.prefix, "prefix", "", "backup storage location prefix in the bucket")
	fs.StringVar(&o.caFile, "ca-file", "", "PEM CA to trust for the S3 endpoint")
}

// sourceFlags adds verify's sources besides the Bucket Secret.
func (o *options) sourceFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.dir, "dir", "", "read a copy of the bucket on disk (aws s3 sync, rclone) instead of S3")
	fs.StringVar(&o.s3Endpoint, "s3-endpoint", "", "S3 endpoint URL (https://host[:port]) to read instead of a Bucket; keys from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
	fs.StringVar(&o.s3Bucket, "s3-bucket", "", "S3 bucket name, with --s3-endpoint")
}

// withTimeout applies --timeout to ctx.
func (o *options) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	return o.timeout.Context(ctx)
}

// open connects to the tenant cluster (subcommands need --kubeconfig).
func (o *options) open(cmd *cobra.Command) (context.Context, context.CancelFunc, *backup.Client, error) {
	if o.target.Embedded() {
		return nil, nil, nil, cli.Usage("%s works on a real cluster: pass --kubeconfig (run without a subcommand for the embedded tour)", cmd.Name())
	}
	ctx, cancel := o.withTimeout(cmd.Context())
	if err := o.target.Open(ctx, nil); err != nil {
		cancel()
		return nil, nil, nil, err
	}
	c, err := backup.NewForConfig(o.target.RESTConfig, backup.Config{Namespace: o.namespace, Logger: o.target.Logger()})
	if err != nil {
		cancel()
		return nil, nil, nil, cli.WithCode(cli.ExitUnavailable, err)
	}
	return ctx, cancel, c, nil
}

// checkBucketFlags refuses an incomplete set of --bucket flags (or of
// verify's other sources) before anything is contacted.
func (o *options) checkBucketFlags() error {
	sources := 0
	for _, set := range []bool{o.dir != "", o.s3Endpoint != "" || o.s3Bucket != "", o.bucket != "" || o.bucketNamespace != ""} {
		if set {
			sources++
		}
	}
	if _, err := cli.ReadPEMCertificates("--ca-file", o.caFile); err != nil {
		return err
	}
	if err := cli.CheckHTTPSURL("--s3-endpoint", o.s3Endpoint); err != nil {
		return err
	}
	switch {
	case sources > 1:
		return cli.Usage("pass one of --dir, --s3-endpoint or --bucket")
	case o.dir != "":
		return nil
	case o.s3Endpoint != "" || o.s3Bucket != "":
		if o.s3Endpoint == "" || o.s3Bucket == "" {
			return cli.Usage("reading S3 needs --s3-endpoint and --s3-bucket")
		}
		if os.Getenv("AWS_ACCESS_KEY_ID") == "" || os.Getenv("AWS_SECRET_ACCESS_KEY") == "" {
			return cli.Usage("--s3-endpoint needs AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the environment")
		}
		return nil
	}
	if o.bucketNamespace == "" || o.bucket == "" {
		return cli.Usage("reading the bucket needs --bucket-namespace and --bucket")
	}
	return errors.Join(cli.CheckDNSLabel("--bucket-namespace", o.bucketNamespace), cli.CheckDNSSubdomain("--bucket", o.bucket))
}

// checkNames refuses (ExitUsage) names that no Kubernetes object can
// have: flag is the argument's name in messages.
func checkNames(flag string, names ...string) error {
	for _, n := range names {
		if n == "" {
			return cli.Usage("%s must not be empty", flag)
		}
		if err := cli.CheckDNSSubdomain(flag, n); err != nil {
			return err
		}
	}
	return nil
}

// checkNamespaces refuses namespace names that are no DNS-1123 label.
func checkNamespaces(flag string, namespaces []string) error {
	for _, n := range namespaces {
		if n == "*" { // Velero's "every namespace"
			continue
		}
		if err := cli.CheckDNSLabel(flag, n); err != nil {
			return err
		}
	}
	return nil
}

// notFound turns the NotFound of reading a Velero object into a
// *cli.NotFoundError (exit 1) when Velero's API is there, and into
// createError's "is the Velero addon enabled" (exit 3) when it is not.
func (o *options) notFound(ctx context.Context, c *backup.Client, err error, what, name string) error {
	if !apierrors.IsNotFound(err) {
		return createError(err)
	}
	if _, lerr := c.Backups(ctx, ""); lerr != nil {
		return createError(lerr)
	}
	return cli.NotFound(what, name, "namespace "+o.namespace+" of "+o.target.Where())
}

// store opens the backup storage location: a directory (--dir), an S3
// endpoint (--s3-endpoint), or the bucket with the credentials from the
// Bucket Secret, read from --bucket-kubeconfig, or from the --kubeconfig
// cluster (with --context) when it is not set. It returns where it reads,
// for messages.
func (o *options) store(ctx context.Context) (*backup.Store, string, error) {
	if err := o.checkBucketFlags(); err != nil {
		return nil, "", err
	}
	if o.dir != "" {
		objects, err := backup.NewDirObjects(o.dir)
		if err != nil {
			return nil, "", cli.Usage("--dir: %v", err)
		}
		s, err := backup.NewStore(backup.StoreConfig{Objects: objects, Prefix: o.prefix})
		return s, o.dir, err
	}
	creds, err := o.credentials(ctx)
	if err != nil {
		return nil, "", err
	}
	s3cfg := backup.S3Config{Credentials: creds, Logger: o.target.Logger()}
	if o.caFile != "" {
		if s3cfg.CACertPEM, err = os.ReadFile(o.caFile); err != nil {
			return nil, "", cli.Usage("read --ca-file: %v", err)
		}
	}
	if o.s3Endpoint != "" {
		s3cfg.URL = o.s3Endpoint
	}
	objects, err := backup.NewS3Objects(s3cfg)
	if err != nil {
		return nil, "", cli.Usage("%v", err)
	}
	s, err := backup.NewStore(backup.StoreConfig{Objects: objects, Prefix: o.prefix})
	return s, objects.String(), err
}

// credentials reads the Bucket Secret, or, with --s3-endpoint, the keys
// from the environment.
func (o *options) credentials(ctx context.Context) (backup.Credentials, error) {
	if o.s3Endpoint != "" {
		return backup.Credentials{Bucket: o.s3Bucket, AccessKeyID: os.Getenv("AWS_ACCESS_KEY_ID"), SecretAccessKey: os.Getenv("AWS_SECRET_ACCESS_KEY")}, nil
	}
	rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: o.bucketKubeconfig}
	overrides := &clientcmd.ConfigOverrides{}
	if o.bucketKubeconfig == "" {
		rules.ExplicitPath, overrides.CurrentContext = o.target.Kubeconfig, o.target.Context
	}
	rc, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides).ClientConfig()
	if err != nil {
		return backup.Credentials{}, cli.WithCode(cli.ExitUnavailable, fmt.Errorf("load %s: %w", rules.ExplicitPath, err))
	}
	kube, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return backup.Credentials{}, cli.WithCode(cli.ExitUnavailable, err)
	}
	creds, err := backup.LoadCredentials(ctx, kube, backup.BucketRef{Namespace: o.bucketNamespace, Bucket: o.bucket, User: o.bucketUser})
	switch {
	case errors.Is(err, backup.ErrSecretNotFound) || errors.Is(err, backup.ErrInvalidSecret):
		return backup.Credentials{}, cli.WithCode(cli.ExitFailure, err)
	case err != nil:
		return backup.Credentials{}, cli.WithCode(cli.ExitUnavailable, fmt.Errorf("read the Bucket Secret: %w", err))
	}
	return creds, nil
}

func listCmd(o *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the cluster's backups (and, with --bucket, what the bucket holds)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.bucket != "" || o.bucketNamespace != "" {
				if err := o.checkBucketFlags(); err != nil {
					return err
				}
			}
			ctx, cancel, c, err := o.open(cmd)
			if err != nil {
				return err
			}
			defer cancel()
			backups, err := c.Backups(ctx, "")
			if err != nil {
				return cli.WithCode(cli.ExitUnavailable, err)
			}
			var inBucket []string
			if o.bucket != "" {
				s, _, err := o.store(ctx)
				if err != nil {
					return err
				}
				if inBucket, err = s.ListBackups(ctx); err != nil {
					return cli.WithCode(cli.ExitUnavailable, err)
				}
			}
			header, rows := listRows(backups, inBucket, o.bucket != "")
			cli.Table(o.out, header, rows)
			return nil
		},
	}
	o.bucketFlags(cmd.Flags())
	return cmd
}

// listRows renders the cluster's backups and, with bucket, a column that
// says whether each is in the bucket, plus a row for each backup the
// bucket holds that the cluster does not know (yet: Velero syncs them
// from the bucket periodically).
func listRows(backups []velerov1.Backup, inBucket []string, bucket bool) ([]string, [][]string) {
	header := []string{"NAME", "PHASE", "STARTED", "ITEMS", "ERRORS", "WARNINGS"}
	if bucket {
		header = append(header, "IN BUCKET")
	}
	stored := map[string]bool{}
	for _, n := range inBucket {
		stored[n] = true
	}
	var rows [][]string
	for _, b := range backups {
		d := backup.Describe(&b)
		row := []string{d.Name, d.Phase, stamp(d.Started), fmt.Sprintf("%d/%d", d.ItemsDone, d.ItemsTotal), fmt.Sprint(d.Errors), fmt.Sprint(d.Warnings)}
		if bucket {
			row = append(row, yesNo(stored[d.Name]))
		}
		delete(stored, d.Name)
		rows = append(rows, row)
	}
	for _, n := range inBucket {
		if stored[n] {
			rows = append(rows, []string{n, "(not in cluster)", "-", "-", "-", "-", "yes"})
		}
	}
	return header, rows
}

func verifyCmd(o *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "verify BACKUP",
		Short: "Verify a backup straight from the bucket (no Velero involved)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.target.Embedded() && o.bucketKubeconfig == "" && o.dir == "" && o.s3Endpoint == "" {
				return cli.Usage("verify reads a real bucket: pass --dir, --s3-endpoint, or --kubeconfig (or --bucket-kubeconfig) and the --bucket flags")
			}
			if err := errors.Join(checkNames("BACKUP", args[0]), o.checkBucketFlags()); err != nil {
				return err
			}
			ctx, cancel := o.withTimeout(cmd.Context())
			defer cancel()
			s, where, err := o.store(ctx)
			if err != nil {
				return err
			}
			return verify(ctx, o, s, where, args[0])
		},
	}
	o.bucketFlags(cmd.Flags())
	o.sourceFlags(cmd.Flags())
	return cmd
}

// verify runs Store.Verify with a progress line and prints the report.
func verify(ctx context.Context, o *options, s *backup.Store, where, name string) error {
	step := cli.Step(o.progress, "verifying "+name+" from "+where)
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
		cli.Table(o.out, []string{"CHECK", "RESULT"}, rows)
	}
	switch {
	case err == nil:
		fmt.Fprintf(o.out, "%s verifies: every file present and intact, %d items as listed\n", name, rep.Items)
		return nil
	case errors.Is(err, backup.ErrCorrupt), errors.Is(err, backup.ErrNotFound):
		return cli.WithCode(cli.ExitFailure, err)
	default:
		return cli.WithCode(cli.ExitUnavailable, err)
	}
}

func backupCmd(o *options) *cobra.Command {
	var namespaces []string
	var ttl time.Duration
	cmd := &cobra.Command{
		Use:   "backup NAME",
		Short: "Create a backup and wait for it, with progress",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if ttl < 0 {
				return cli.Usage("--ttl %s is negative", ttl)
			}
			if err := errors.Join(checkNames("NAME", args[0]), checkNamespaces("--include-namespace", namespaces)); err != nil {
				return err
			}
			ctx, cancel, c, err := o.open(cmd)
			if err != nil {
				return err
			}
			defer cancel()
			if _, err := c.CreateBackup(ctx, backup.BackupOptions{Name: args[0], IncludedNamespaces: namespaces, TTL: ttl}); err != nil {
				return createError(err)
			}
			b, err := waitBackup(ctx, o, c, args[0])
			if b != nil {
				fmt.Fprint(o.out, backup.Describe(b))
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
			m, err := namespaceMapping(mapping)
			if err != nil {
				return err
			}
			if err := checkNames("BACKUP", args[0]); err != nil {
				return err
			}
			if cmd.Flags().Changed("name") {
				if err := checkNames("--name", name); err != nil {
					return err
				}
			}
			ctx, cancel, c, err := o.open(cmd)
			if err != nil {
				return err
			}
			defer cancel()
			if name == "" {
				name = args[0] + "-" + time.Now().UTC().Format("20060102150405")
			}
			// No Restore for a backup that does not exist: Velero would
			// only fail it later, and it would stay behind.
			if _, err := c.Backup(ctx, args[0]); err != nil {
				return o.notFound(ctx, c, err, "backup", args[0])
			}
			if _, err := c.CreateRestore(ctx, backup.RestoreOptions{Name: name, BackupName: args[0], NamespaceMapping: m}); err != nil {
				return createError(err)
			}
			return waitRestore(ctx, o, c, name)
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "restore name (default BACKUP-<timestamp>)")
	cmd.Flags().StringSliceVar(&mapping, "namespace-mapping", nil, "restore namespace from into to (from:to, repeatable)")
	return cmd
}

// namespaceMapping parses --namespace-mapping values.
func namespaceMapping(pairs []string) (map[string]string, error) {
	m := map[string]string{}
	for _, kv := range pairs {
		from, to, ok := strings.Cut(kv, ":")
		if !ok || from == "" || to == "" {
			return nil, cli.Usage("--namespace-mapping wants from:to, got %q", kv)
		}
		if err := errors.Join(cli.CheckDNSLabel("--namespace-mapping", from), cli.CheckDNSLabel("--namespace-mapping", to)); err != nil {
			return nil, err
		}
		m[from] = to
	}
	return m, nil
}

// createError gives a failed create its exit code: a cluster without
// Velero's API (the addon is off) or that does not answer is unavailable;
// a name that exists already, or that the API refuses, is a failure.
func createError(err error) error {
	switch {
	case apierrors.IsNotFound(err):
		return cli.WithCode(cli.ExitUnavailable, fmt.Errorf("%w (is the Velero addon enabled in this cluster?)", err))
	case apierrors.IsAlreadyExists(err), apierrors.IsInvalid(err), apierrors.IsForbidden(err), errors.Is(err, backup.ErrInvalidConfig):
		return cli.WithCode(cli.ExitFailure, err)
	default:
		return cli.WithCode(cli.ExitUnavailable, err)
	}
}
