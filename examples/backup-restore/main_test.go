package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	velerov1 "github.com/vmware-tanzu/velero/pkg/apis/velero/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/cozystack/tenantkit/backup"
	"github.com/cozystack/tenantkit/backup/backuptest"
	"github.com/cozystack/tenantkit/cli"
	"github.com/cozystack/tenantkit/internal/exitcodetest"
	"github.com/cozystack/tenantkit/localenv"
)

// result is one run of the command line.
type result struct {
	code             int
	stdout, progress string
}

// syncBuffer is a bytes.Buffer safe for the progress line's ticker and
// the command writing at the same time (as os.Stderr is).
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// run runs the command line in process, through the entry point main
// uses, and returns its exit code and outputs.
func run(t *testing.T, ctx context.Context, args ...string) result {
	t.Helper()
	var out, progress syncBuffer
	cmd := newCommand()
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&progress)
	code := cli.Execute(ctx, cmd)
	r := result{code: code, stdout: out.String(), progress: progress.String()}
	t.Logf("backup-restore %s → exit %d\n%s%s", strings.Join(args, " "), code, r.stdout, r.progress)
	return r
}

// world is what the subcommands find on a real Cozystack tenant: a
// management cluster holding the tenant's Bucket Secret, and a tenant
// cluster running Velero whose location is that Bucket.
type world struct {
	tenant, mgmt string // admin kubeconfig files
	caFile       string // the S3 server's CA
	s3URL        string // the S3 server's endpoint URL
	s3Keys       [2]string
	kube         kubernetes.Interface
	dyn          dynamic.Interface
	velero       *backup.Client
	kind         bool // the tenant cluster is a kind cluster
}

// startWorld starts it with the tenant cluster on env: a local
// environment (its first kube-apiserver) or a kind cluster. Beside it: a
// second kube-apiserver for the management cluster and a versitygw S3
// server with bucket velero-backups (on env, or on a local environment of
// their own when env is a kind cluster, which has no etcd for another
// apiserver), a real
// Velero server on the host serving the tenant cluster (out of cluster,
// where the addon runs it in cluster) and the location the addon's chart
// would create from the Bucket's credentials.
func startWorld(t *testing.T, ctx context.Context, env *localenv.Env) *world {
	t.Helper()
	local := env
	if env.Provider() == localenv.Kind {
		local = localenv.StartT(t, localenv.Config{SkipAPIServer: true})
	}
	mgmt, err := local.StartAPIServer(ctx, localenv.APIServerConfig{Name: "management"})
	require.NoError(t, err)
	mgmtKube, err := kubernetes.NewForConfig(mgmt.RESTConfig())
	require.NoError(t, err)
	s3, err := local.StartS3(ctx, localenv.S3Config{Buckets: []string{"velero-backups"}})
	require.NoError(t, err)
	require.NoError(t, createBucketSecret(ctx, mgmtKube, s3))
	creds, err := backup.LoadCredentials(ctx, mgmtKube, backup.BucketRef{Namespace: "tenant-demo", Bucket: "velero-backups", User: "velero"})
	require.NoError(t, err)

	w := &world{tenant: env.KubeconfigPath(), mgmt: mgmt.KubeconfigPath(), caFile: filepath.Join(t.TempDir(), "s3-ca.pem"),
		kind: env.Provider() == localenv.Kind}
	require.NoError(t, os.WriteFile(w.caFile, s3.CAPEM, 0o600))
	w.s3URL, w.s3Keys = "https://"+s3.Endpoint, [2]string{s3.AccessKey, s3.SecretKey}
	w.kube, err = kubernetes.NewForConfig(env.RESTConfig())
	require.NoError(t, err)
	w.dyn, err = dynamic.NewForConfig(env.RESTConfig())
	require.NoError(t, err)
	_, err = env.StartVelero(ctx, localenv.VeleroConfig{})
	require.NoError(t, err)
	w.velero, err = backup.NewForConfig(env.RESTConfig(), backup.Config{PollInterval: 250 * time.Millisecond})
	require.NoError(t, err)
	_, err = w.velero.ApplyLocation(ctx, backup.LocationSpec{Credentials: creds, CACertPEM: s3.CAPEM})
	require.NoError(t, err)
	_, err = w.velero.WaitLocationAvailable(ctx, "default")
	require.NoError(t, err)
	return w
}

// deleteDemo deletes namespace demo. A kind cluster's namespace
// controller empties and removes it, as on any cluster; the local
// environment runs none, so the example's deleteDemo does its part.
func (w *world) deleteDemo(t *testing.T, ctx context.Context) {
	t.Helper()
	if !w.kind {
		require.NoError(t, deleteDemo(ctx, io.Discard, w.kube, w.dyn))
		return
	}
	require.NoError(t, w.kube.CoreV1().Namespaces().Delete(ctx, "demo", metav1.DeleteOptions{}))
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		_, err := w.kube.CoreV1().Namespaces().Get(ctx, "demo", metav1.GetOptions{})
		assert.True(c, apierrors.IsNotFound(err), "namespace demo still there (%v)", err)
	}, 2*time.Minute, 500*time.Millisecond)
}

// args joins groups of arguments.
func args(groups ...[]string) []string {
	var out []string
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

// TestSubcommands runs backup, list, verify and restore with --kubeconfig
// on a real tenant cluster (see startWorld): it backs the demo namespace
// up, lists and verifies the backup, deletes the namespace, restores it
// and compares every object.
func TestSubcommands(t *testing.T) {
	subcommands(t, localenv.StartT(t, localenv.Config{EtcdMembers: 1}))
}

// TestSubcommands_kind runs the same with a kind cluster (one node,
// tenantkit's offline node image) as the tenant cluster, as a user would
// run the example against theirs: Velero serves the kind cluster's API,
// the Bucket Secret is on a management kube-apiserver of a local
// environment, the bucket on its S3 server. Opt-in with TENANTKIT_KIND=1
// (make test-kind).
func TestSubcommands_kind(t *testing.T) {
	if os.Getenv("TENANTKIT_KIND") == "" {
		t.Skip("set TENANTKIT_KIND=1 to run the example against a kind cluster")
	}
	env := localenv.StartT(t, localenv.Config{Provider: localenv.Kind})
	t.Logf("kind cluster %s created in %s", env.KindClusterName(), env.StartDuration().Round(time.Second))
	subcommands(t, env)
}

func subcommands(t *testing.T, env *localenv.Env) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	w := startWorld(t, ctx, env)
	require.NoError(t, applyDemo(ctx, w.kube, w.dyn))
	before, err := snapshot(ctx, w.dyn)
	require.NoError(t, err)
	require.Len(t, before, 4)
	kc := []string{"--kubeconfig", w.tenant}
	bucket := []string{"--bucket-kubeconfig", w.mgmt, "--bucket-namespace", "tenant-demo", "--bucket", "velero-backups", "--ca-file", w.caFile}

	r := run(t, ctx, args([]string{"backup", "demo-1", "--include-namespace", "demo", "--ttl", "24h"}, kc)...)
	require.Equal(t, cli.ExitOK, r.code)
	require.Regexp(t, `(?m)^Phase:\s+Completed$`, r.stdout)
	require.Regexp(t, `(?m)^Namespaces:\s+demo$`, r.stdout)
	require.Regexp(t, `(?m)^Errors:\s+0$`, r.stdout)
	require.Contains(t, r.progress, "Backup demo-1: Completed")
	b, err := w.velero.Backup(ctx, "demo-1")
	require.NoError(t, err)
	require.EqualValues(t, "Completed", b.Status.Phase)
	require.Equal(t, []string{"demo"}, b.Spec.IncludedNamespaces)
	require.Equal(t, 24*time.Hour, b.Spec.TTL.Duration)
	items := strconv.Itoa(b.Status.Progress.ItemsBackedUp)
	require.GreaterOrEqual(t, b.Status.Progress.ItemsBackedUp, 5, "4 objects and the namespace")

	r = run(t, ctx, args([]string{"list"}, kc, bucket)...)
	require.Equal(t, cli.ExitOK, r.code)
	require.Regexp(t, `(?m)^NAME\s+PHASE\s+STARTED\s+ITEMS\s+ERRORS\s+WARNINGS\s+IN BUCKET$`, r.stdout)
	require.Regexp(t, `(?m)^demo-1\s+Completed\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\s+`+items+`/`+items+`\s+0\s+0\s+yes$`, r.stdout)

	// verify reads the bucket only: no tenant cluster needed.
	r = run(t, ctx, args([]string{"verify", "demo-1"}, bucket)...)
	require.Equal(t, cli.ExitOK, r.code)
	require.Regexp(t, `(?m)^phase\s+Completed$`, r.stdout)
	require.Regexp(t, `(?m)^items \(archive / resource list\)\s+`+items+` / `+items+`$`, r.stdout)
	require.NotContains(t, r.stdout, "PROBLEM")
	require.Contains(t, r.stdout, "demo-1 verifies")

	// verify reads an S3 endpoint with keys from the environment too.
	t.Setenv("AWS_ACCESS_KEY_ID", w.s3Keys[0])
	t.Setenv("AWS_SECRET_ACCESS_KEY", w.s3Keys[1])
	r = run(t, ctx, "verify", "demo-1", "--s3-endpoint", w.s3URL, "--s3-bucket", "velero-backups", "--ca-file", w.caFile)
	require.Equal(t, cli.ExitOK, r.code)
	require.Contains(t, r.stdout, "demo-1 verifies")

	r = run(t, ctx, args([]string{"verify", "no-such-backup"}, kc, bucket)...)
	require.Equal(t, cli.ExitFailure, r.code, "a backup the bucket does not hold does not verify")
	require.Contains(t, r.progress, "backup no-such-backup has no files")
	// Without --bucket-kubeconfig the Secret is looked up in the tenant
	// cluster, which does not hold it.
	r = run(t, ctx, args([]string{"verify", "demo-1"}, kc, bucket[2:])...)
	require.Equal(t, cli.ExitFailure, r.code)
	require.Contains(t, r.progress, "bucket secret not found")

	w.deleteDemo(t, ctx)
	gone, err := snapshot(ctx, w.dyn)
	require.NoError(t, err)
	require.Empty(t, gone)

	// The preview of the restore: everything is to be created.
	r = run(t, ctx, args([]string{"preview", "demo-1"}, kc, bucket)...)
	require.Equal(t, cli.ExitOK, r.code, r.progress)
	require.Regexp(t, `(?m)^create\s+namespaces\s+v1/Namespace demo\s+created`, r.stdout)
	require.Regexp(t, `(?m)^create\s+configmaps\s+v1/ConfigMap demo/demo-cm\s+created`, r.stdout)
	r = run(t, ctx, args([]string{"preview", "demo-1", "--json"}, kc, bucket)...)
	require.Equal(t, cli.ExitOK, r.code)
	var plan backup.RestorePlan
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &plan))
	// Everything is to be created but the events a real cluster's
	// controllers recorded (Velero never restores events).
	require.Equal(t, len(plan.Items), plan.Counts[backup.RestoreCreate]+plan.Counts[backup.RestoreNever])
	for _, it := range plan.Items {
		if it.Action == backup.RestoreNever {
			require.Equal(t, "Event", it.Kind, it.ID())
		}
	}
	restorable := strconv.Itoa(plan.Counts[backup.RestoreCreate])
	r = run(t, ctx, args([]string{"preview", "demo-1", "--existing-resource-policy", "replace"}, kc, bucket)...)
	require.Equal(t, cli.ExitUsage, r.code, "a policy Velero does not know")
	require.NotContains(t, r.progress, "planning a restore", "refused before any work")
	r = run(t, ctx, args([]string{"preview", "demo-1", "--selector", "app=nothing-has-this"}, kc, bucket)...)
	require.Equal(t, cli.ExitOK, r.code)
	require.Regexp(t, `(?m)^excluded\s+configmaps\s+v1/ConfigMap demo/demo-cm\s+-\s+labels do not match`, r.stdout)
	r = run(t, ctx, args([]string{"preview", "demo-1", "--selector", "a b c"}, kc, bucket)...)
	require.Equal(t, cli.ExitUsage, r.code)

	warnings := "0"
	if w.kind {
		// A real cluster's root CA publisher writes kube-root-ca.crt into
		// the namespace as soon as Velero has created it, as a rule before
		// Velero restores its copy, which Velero then skips with a warning
		// (the preview, made before, plans to create it).
		warnings = "[01]"
	}
	r = run(t, ctx, args([]string{"restore", "demo-1", "--name", "demo-1-restore"}, kc)...)
	require.Equal(t, cli.ExitOK, r.code)
	require.Regexp(t, `(?m)^demo-1-restore\s+demo-1\s+Completed\s+`+restorable+` of `+restorable+`\s+0\s+`+warnings+`$`, r.stdout)
	restored, err := w.velero.Restore(ctx, "demo-1-restore")
	require.NoError(t, err)
	require.EqualValues(t, "Completed", restored.Status.Phase)
	after, err := snapshot(ctx, w.dyn)
	require.NoError(t, err)
	require.Equal(t, before, after, "restored objects differ")
	// check agrees: nothing missing or different, Velero's list read.
	r = run(t, ctx, args([]string{"check", "demo-1-restore"}, kc, bucket)...)
	for _, warning := range regexp.MustCompile(`(?m)^velero warning.*$`).FindAllString(r.stdout, -1) {
		require.Contains(t, warning, "ConfigMap:kube-root-ca.crt already exists")
	}
	require.Equal(t, cli.ExitOK, r.code, r.stdout+r.progress)
	require.Contains(t, r.stdout, "nothing missing or different")
	// On a real cluster the endpoint controllers rewrite the restored
	// Endpoints of Service web and replace its EndpointSlice (owned by the
	// Service's old UID) with one of another name: check names them as
	// replaced, not as a failed restore. Nothing else is.
	for _, p := range regexp.MustCompile(`(?m)^REPLACED\s+(\S+ \S+)`).FindAllStringSubmatch(r.stdout, -1) {
		require.True(t, w.kind, "replaced items on the local environment, which runs no endpoint controllers: %s", p[1])
		require.Regexp(t, `^(discovery\.k8s\.io/v1/EndpointSlice demo/web-\w+|v1/Endpoints demo/web)$`, p[1])
		t.Logf("check: %s replaced by the cluster's endpoint controllers", p[1])
	}

	r = run(t, ctx, args([]string{"restore", "demo-1", "--name", "demo-1-restore"}, kc)...)
	require.Equal(t, cli.ExitFailure, r.code, "a restore that exists already")
	require.Contains(t, r.progress, "already exists")

	// Names that do not exist: exit 1, naming what and where, and no
	// Restore object created for a backup that does not exist.
	r = run(t, ctx, args([]string{"restore", "no-such-backup", "--name", "ghost-restore"}, kc)...)
	require.Equal(t, cli.ExitFailure, r.code)
	require.Contains(t, r.progress, `backup "no-such-backup" not found in namespace cozy-velero of the cluster of `+w.tenant)
	_, err = w.velero.Restore(ctx, "ghost-restore")
	require.True(t, apierrors.IsNotFound(err), "a Restore was created for a backup that does not exist: %v", err)
	r = run(t, ctx, args([]string{"check", "no-such-restore"}, kc, bucket)...)
	require.Equal(t, cli.ExitFailure, r.code)
	require.Contains(t, r.progress, `restore "no-such-restore" not found in namespace cozy-velero`)
}

// TestDemo runs the embedded tour (no subcommand, no --kubeconfig) end to
// end, so that it cannot rot unnoticed.
func TestDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts real servers (skipped with -short)")
	}
	r := run(t, context.Background(), "--timeout", "5m")
	require.Equal(t, cli.ExitOK, r.code)
	require.Regexp(t, `(?m)^default\s+aws\s+velero-backups\s+Available\s+ReadWrite\s+true$`, r.stdout)
	require.Regexp(t, `(?m)^demo-1 verifies: every file present and intact, \d+ items as listed$`, r.stdout)
	for _, obj := range []string{"ConfigMap/demo-cm", "Secret/demo-secret", "Deployment/web", "Service/web"} {
		require.Regexp(t, `(?m)^`+obj+`\s+identical$`, r.stdout)
	}
	require.Contains(t, r.stdout, "The diff is empty")
	require.Contains(t, r.stdout, "restore demo-1-restore: ")
	require.Contains(t, r.stdout, "nothing missing or different")
	require.Contains(t, r.progress, "stopping the embedded local environment")
}

// TestMain lets exitcodetest run the test binary as the program.
func TestMain(m *testing.M) { exitcodetest.Main(m, main) }

// TestExitCodes runs the program over the bad flag values and names that
// are refused before anything is contacted (the kubeconfig's cluster
// does not answer: reaching it would be exit 3).
func TestExitCodes(t *testing.T) {
	kc := exitcodetest.WriteKubeconfigs(t)
	k := []string{"--kubeconfig", kc.Unreachable}
	bucket := []string{"--bucket-namespace", "tenant-demo", "--bucket", "velero-backups"}
	notPEM := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(notPEM, []byte("not a certificate\n"), 0o600))
	exitcodetest.Run(t, cli.Execute, func(stdout *bytes.Buffer) *cobra.Command { return newCommand() }, []exitcodetest.Case{
		{Name: "unknown restore policy", Args: args([]string{"preview", "demo-1", "--existing-resource-policy", "replace"}, k, bucket), Code: cli.ExitUsage,
			First: `backup-restore: --existing-resource-policy "replace": want one of "", "none", "update"`},
		{Name: "backup name not DNS-1123", Args: args([]string{"backup", "Demo_1"}, k), Code: cli.ExitUsage, First: `backup-restore: NAME "Demo_1": a lowercase RFC 1123 subdomain`},
		{Name: "negative --ttl", Args: args([]string{"backup", "demo-1", "--ttl", "-1h"}, k), Code: cli.ExitUsage, First: "backup-restore: --ttl -1h0m0s is negative"},
		{Name: "--include-namespace not DNS-1123", Args: args([]string{"backup", "demo-1", "--include-namespace", "Demo"}, k), Code: cli.ExitUsage, First: `backup-restore: --include-namespace "Demo": a lowercase RFC 1123 label`},
		{Name: "restore of a backup name not DNS-1123", Args: args([]string{"restore", "demo 1"}, k), Code: cli.ExitUsage, First: `backup-restore: BACKUP "demo 1": a lowercase RFC 1123 subdomain`},
		{Name: "restore --name not DNS-1123", Args: args([]string{"restore", "demo-1", "--name", "Restore!"}, k), Code: cli.ExitUsage, First: `backup-restore: --name "Restore!": a lowercase RFC 1123 subdomain`},
		{Name: "restore --name empty", Args: args([]string{"restore", "demo-1", "--name", ""}, k), Code: cli.ExitUsage, First: "backup-restore: --name must not be empty"},
		{Name: "namespace mapping not DNS-1123", Args: args([]string{"restore", "demo-1", "--namespace-mapping", "demo:Demo2"}, k), Code: cli.ExitUsage, First: `backup-restore: --namespace-mapping "Demo2": a lowercase RFC 1123 label`},
		{Name: "check: a restore name that reads as a flag", Args: args([]string{"check", "-x"}, k, bucket), Code: cli.ExitUsage, First: `backup-restore: unknown shorthand flag: 'x' in -x`},
		{Name: "check of a restore name with capitals", Args: args([]string{"check", "Demo"}, k, bucket), Code: cli.ExitUsage, First: `backup-restore: RESTORE "Demo": a lowercase RFC 1123 subdomain`},
		{Name: "verify --ca-file not PEM", Args: args([]string{"verify", "demo-1", "--ca-file", notPEM}, k, bucket), Code: cli.ExitUsage, First: "backup-restore: --ca-file " + notPEM + ": not a PEM file of certificates"},
		{Name: "verify --s3-endpoint not https", Args: []string{"verify", "demo-1", "--s3-endpoint", "s3.example.org", "--s3-bucket", "b"}, Code: cli.ExitUsage,
			First: `backup-restore: --s3-endpoint "s3.example.org" is not an https URL`},
		{Name: "--bucket-namespace not DNS-1123", Args: args([]string{"verify", "demo-1", "--bucket-namespace", "Tenant", "--bucket", "b"}, k), Code: cli.ExitUsage,
			First: `backup-restore: --bucket-namespace "Tenant": a lowercase RFC 1123 label`},
		{Name: "restore: unreachable cluster", Args: args([]string{"restore", "demo-1"}, k), Code: cli.ExitUnavailable, First: "backup-restore: cluster of " + kc.Unreachable + " does not answer"},
		{Name: "interrupted", Ctx: exitcodetest.Cancelled(), Args: args([]string{"restore", "demo-1"}, k), Code: cli.ExitInterrupted, First: "backup-restore: interrupted"},
	})
}

// TestUsage checks the exit codes of bad command lines and unreachable
// clusters, which need no server.
func TestUsage(t *testing.T) {
	kc := exitcodetest.WriteKubeconfigs(t)
	unreachable := kc.Unreachable
	dir := bucketCopy(t)
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	for _, tt := range []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"subcommand without --kubeconfig", []string{"list"}, cli.ExitUsage, "pass --kubeconfig"},
		{"--kubeconfig without a subcommand", []string{"--kubeconfig", unreachable}, cli.ExitUsage, "use a subcommand"},
		{"unknown flag", []string{"backup", "--no-such-flag"}, cli.ExitUsage, "unknown flag"},
		{"backup without a name", []string{"backup", "--kubeconfig", unreachable}, cli.ExitUsage, "accepts 1 arg"},
		{"verify without the bucket", []string{"verify", "demo-1", "--kubeconfig", unreachable}, cli.ExitUsage, "--bucket-namespace and --bucket"},
		{"list with half the bucket", []string{"list", "--kubeconfig", unreachable, "--bucket", "b"}, cli.ExitUsage, "--bucket-namespace and --bucket"},
		{"bad namespace mapping", []string{"restore", "demo-1", "--kubeconfig", unreachable, "--namespace-mapping", "demo"}, cli.ExitUsage, "from:to"},
		{"unreachable cluster", []string{"list", "--kubeconfig", unreachable}, cli.ExitUnavailable, "does not answer"},
		{"missing kubeconfig", []string{"backup", "demo-1", "--kubeconfig", kc.Missing}, cli.ExitUsage, "load kubeconfig"},
		{"garbled kubeconfig", []string{"list", "--kubeconfig", kc.Garbled}, cli.ExitUsage, "load kubeconfig"},
		{"unknown context", []string{"list", "--kubeconfig", unreachable, "--context", "nope"}, cli.ExitUsage, "load kubeconfig"},
		{"stray argument", []string{"list", "extra", "--kubeconfig", unreachable}, cli.ExitUsage, `unknown command "extra" for "backup-restore list"`},
		{"unknown subcommand", []string{"lsit"}, cli.ExitUsage, `unknown command "lsit" for "backup-restore"`},
		{"negative timeout", []string{"list", "--timeout", "-5s"}, cli.ExitUsage, `invalid argument "-5s" for "--timeout" flag: -5s is negative`},
		{"verify a bucket copy", []string{"verify", "nightly", "--dir", dir}, cli.ExitOK, "verifying nightly from " + dir},
		{"verify a broken backup in a bucket copy", []string{"verify", "broken", "--dir", dir}, cli.ExitFailure, "verify broken: broken.tar.gz: tar"},
		{"verify a backup the copy lacks", []string{"verify", "absent", "--dir", dir}, cli.ExitFailure, "backup absent has no files"},
		{"verify a missing directory", []string{"verify", "nightly", "--dir", filepath.Join(dir, "absent")}, cli.ExitUsage, "--dir"},
		{"verify with two sources", []string{"verify", "nightly", "--dir", dir, "--bucket", "b", "--bucket-namespace", "n"}, cli.ExitUsage, "pass one of --dir, --s3-endpoint or --bucket"},
		{"verify S3 without a bucket", []string{"verify", "nightly", "--s3-endpoint", "https://127.0.0.1:1"}, cli.ExitUsage, "--s3-endpoint and --s3-bucket"},
		{"verify S3 without keys", []string{"verify", "nightly", "--s3-endpoint", "https://127.0.0.1:1", "--s3-bucket", "b"}, cli.ExitUsage, "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, context.Background(), tt.args...)
			require.Equal(t, tt.code, r.code)
			require.Contains(t, r.progress, tt.msg)
		})
	}
}

// bucketCopy writes a copy of a bucket on disk, as `aws s3 sync` leaves
// it: an intact backup "nightly" and a backup "broken" whose archive is
// cut short.
func bucketCopy(t *testing.T) string {
	dir := t.TempDir()
	for _, name := range []string{"nightly", "broken"} {
		files, err := backuptest.Spec{Name: name, ConfigMaps: 3}.Files()
		require.NoError(t, err)
		archive := files[name+".tar.gz"]
		if name == "broken" {
			files[name+".tar.gz"] = archive[:len(archive)/2]
		}
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "backups", name), 0o755))
		for f, data := range files {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "backups", name, f), data, 0o644))
		}
	}
	return dir
}

// TestListRows checks the list table, with a backup that only the bucket
// holds (Velero has not synced it into the cluster yet).
func TestListRows(t *testing.T) {
	backups := []velerov1.Backup{
		{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Status: velerov1.BackupStatus{Phase: velerov1.BackupPhaseCompleted,
			Progress: &velerov1.BackupProgress{TotalItems: 7, ItemsBackedUp: 7}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Status: velerov1.BackupStatus{Phase: velerov1.BackupPhaseInProgress}},
	}
	for _, tt := range []struct {
		name     string
		inBucket []string
		bucket   bool
		want     [][]string
	}{
		{"cluster only", nil, false, [][]string{
			{"a", "Completed", "-", "7/7", "0", "0"},
			{"b", "InProgress", "-", "0/0", "0", "0"},
		}},
		{"with the bucket", []string{"a", "c"}, true, [][]string{
			{"a", "Completed", "-", "7/7", "0", "0", "yes"},
			{"b", "InProgress", "-", "0/0", "0", "0", "no"},
			{"c", "(not in cluster)", "-", "-", "-", "-", "yes"},
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			header, rows := listRows(backups, tt.inBucket, tt.bucket)
			require.Len(t, header, len(tt.want[0]))
			require.Equal(t, tt.want, rows)
		})
	}
}
