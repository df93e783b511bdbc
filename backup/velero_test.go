package backup_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/cozystack/tenantkit/backup"
	"github.com/cozystack/tenantkit/backup/backuptest"
	"github.com/cozystack/tenantkit/localenv"
)

// demoResources are the kinds the round trip backs up and compares.
var demoResources = []schema.GroupVersionResource{
	{Version: "v1", Resource: "configmaps"},
	{Version: "v1", Resource: "secrets"},
	{Version: "v1", Resource: "services"},
	{Group: "apps", Version: "v1", Resource: "deployments"},
	{Group: "example.com", Version: "v1", Resource: "widgets"},
}

const demoObjects = `
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: demo, labels: {app: web}}
data: {marker: backup-restore-validation, mode: production}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: feature-flags, namespace: demo, annotations: {owner: team-a}}
data: {flags.json: '{"beta": true}'}
---
apiVersion: v1
kind: Secret
metadata: {name: db-password, namespace: demo}
type: Opaque
stringData: {password: s3cr3t-value}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: demo, labels: {app: web}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: web, image: "nginx:1.27", ports: [{containerPort: 80}], envFrom: [{configMapRef: {name: settings}}]}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: demo}
spec:
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: 80}]
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: gizmo, namespace: demo}
spec: {size: 3, color: blue}
`

// cluster is one apiserver with its Velero server and clients.
type cluster struct {
	rc     *rest.Config
	kube   kubernetes.Interface
	dyn    dynamic.Interface
	velero *backup.Client
}

func newCluster(t *testing.T, rc *rest.Config) *cluster {
	t.Helper()
	kube, err := kubernetes.NewForConfig(rc)
	require.NoError(t, err)
	dyn, err := dynamic.NewForConfig(rc)
	require.NoError(t, err)
	vc, err := backup.NewForConfig(rc, backup.Config{PollInterval: 250 * time.Millisecond})
	require.NoError(t, err)
	return &cluster{rc: rc, kube: kube, dyn: dyn, velero: vc}
}

// TestVelero runs the real Velero v1.18.3 server and AWS plugin against a
// local apiserver and versitygw: Bucket Secret → credentials → location →
// backup → verify from S3 → delete the namespace → restore → equal
// objects; then a second cluster restores the same backup after sync;
// then the failure paths and deletion through DeleteBackupRequest.
func TestVelero(t *testing.T) {
	e := startS3(t, localenv.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	a := newCluster(t, e.env.RESTConfig())

	// The tenant's Bucket Secret, as Cozystack derives it.
	_, err := a.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tenant-demo"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	bucketRef := backup.BucketRef{Namespace: "tenant-demo", Bucket: "velero-backups", User: "velero"}
	_, err = a.kube.CoreV1().Secrets("tenant-demo").Create(ctx, backup.CredentialsSecret(bucketRef, e.creds), metav1.CreateOptions{})
	require.NoError(t, err)
	creds, err := backup.LoadCredentials(ctx, a.kube, bucketRef)
	require.NoError(t, err)
	require.Equal(t, e.creds, creds)

	// Velero reads API discovery at start-up (and every few minutes), so
	// the custom resource's CRD exists before the server starts, as it
	// would in a real cluster.
	createDemo(t, ctx, a)
	before := snapshot(t, ctx, a)
	require.Len(t, before, 6)

	_, err = e.env.StartVelero(ctx, localenv.VeleroConfig{})
	require.NoError(t, err)
	_, err = a.velero.ApplyLocation(ctx, backup.LocationSpec{Credentials: creds, CACertPEM: e.s3.CAPEM})
	require.NoError(t, err)
	bsl, err := a.velero.WaitLocationAvailable(ctx, "default")
	require.NoError(t, err)
	require.EqualValues(t, "Available", bsl.Status.Phase)

	var phases []string
	_, err = a.velero.CreateBackup(ctx, backup.BackupOptions{Name: "demo-1", IncludedNamespaces: []string{"demo"}, TTL: 24 * time.Hour})
	require.NoError(t, err)
	b, err := a.velero.WaitBackup(ctx, "demo-1", backup.WaitOptions{Progress: func(p backup.Progress) { phases = append(phases, p.Phase) }})
	require.NoError(t, err, "phases seen: %v", phases)
	require.EqualValues(t, "Completed", b.Status.Phase)
	require.Equal(t, "Completed", phases[len(phases)-1])

	store := e.store(t, backup.S3Config{}, "")
	rep, err := store.Verify(ctx, "demo-1", backup.VerifyOptions{})
	require.NoError(t, err)
	require.Equal(t, "1.1.0", rep.FormatVersion)
	require.Equal(t, rep.ListedItems, rep.Items)
	require.GreaterOrEqual(t, rep.Items, 7, "6 objects and the namespace (and the CRD)")
	t.Logf("verified demo-1: %d items, %d bytes", rep.Items, rep.ArchiveBytes)
	desc, err := a.velero.DescribeBackup(ctx, "demo-1", store)
	require.NoError(t, err)
	require.Equal(t, 1, desc.Resources["example.com/v1/Widget"])
	require.Equal(t, 2, desc.Resources["v1/ConfigMap"])

	deleteDemo(t, ctx, a)
	_, err = a.velero.CreateRestore(ctx, backup.RestoreOptions{Name: "demo-1-restore", BackupName: "demo-1"})
	require.NoError(t, err)
	_, err = a.velero.WaitRestore(ctx, "demo-1-restore", backup.WaitOptions{})
	require.NoError(t, err)
	require.Equal(t, before, snapshot(t, ctx, a), "restored objects differ")

	t.Run("cross-cluster", func(t *testing.T) {
		apiB, err := e.env.StartAPIServer(ctx, localenv.APIServerConfig{Name: "cluster-b"})
		require.NoError(t, err)
		bc := newCluster(t, apiB.RESTConfig())
		_, err = e.env.StartVelero(ctx, localenv.VeleroConfig{Name: "velero-b", APIServer: apiB})
		require.NoError(t, err)
		_, err = bc.velero.ApplyLocation(ctx, backup.LocationSpec{Credentials: creds, CACertPEM: e.s3.CAPEM, ReadOnly: true})
		require.NoError(t, err)
		_, err = bc.velero.WaitLocationAvailable(ctx, "default")
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			_, err := bc.velero.Backup(ctx, "demo-1")
			return err == nil
		}, 2*time.Minute, 500*time.Millisecond, "backup never synced into cluster-b")
		_, err = bc.velero.CreateRestore(ctx, backup.RestoreOptions{Name: "demo-1-to-b", BackupName: "demo-1"})
		require.NoError(t, err)
		_, err = bc.velero.WaitRestore(ctx, "demo-1-to-b", backup.WaitOptions{})
		require.NoError(t, err)
		require.Equal(t, before, snapshot(t, ctx, bc), "objects restored into cluster-b differ")
	})

	t.Run("failed validation surfaces its errors", func(t *testing.T) {
		_, err := a.velero.CreateBackup(ctx, backup.BackupOptions{Name: "bad-location", StorageLocation: "nowhere"})
		require.NoError(t, err)
		_, err = a.velero.WaitBackup(ctx, "bad-location", backup.WaitOptions{})
		require.ErrorIs(t, err, backup.ErrFailedValidation)
		var perr *backup.PhaseError
		require.ErrorAs(t, err, &perr)
		require.NotEmpty(t, perr.ValidationErrors)
		require.Contains(t, err.Error(), "nowhere")
	})

	t.Run("foreign prefix is refused", func(t *testing.T) {
		// A bucket shared with other data (not the default location's).
		require.NoError(t, e.s3.CreateBucket(ctx, "shared-data"))
		shared := backuptest.Bucket{Client: e.s3.Client(), Name: "shared-data"}
		shared.PutObjectT(t, "shared/photos/cat.jpg", []byte("meow"))
		creds := creds
		creds.Bucket = "shared-data"
		_, err := a.velero.ApplyLocation(ctx, backup.LocationSpec{Name: "shared", Credentials: creds, Prefix: "shared", CACertPEM: e.s3.CAPEM, NotDefault: true})
		require.ErrorIs(t, err, backup.ErrInvalidPrefix)
		// Velero agrees: forced through, the location turns Unavailable.
		_, err = a.velero.ApplyLocation(ctx, backup.LocationSpec{Name: "shared", Credentials: creds, Prefix: "shared", CACertPEM: e.s3.CAPEM, NotDefault: true, SkipPrefixCheck: true})
		require.NoError(t, err)
		_, err = a.velero.WaitLocationAvailable(ctx, "shared")
		require.ErrorIs(t, err, backup.ErrLocationUnavailable)
		require.Contains(t, err.Error(), "invalid top-level directories")
	})

	t.Run("schedule", func(t *testing.T) {
		s, err := a.velero.CreateSchedule(ctx, backup.ScheduleOptions{Name: "nightly", Cron: "0 2 * * *",
			Template: backup.BackupOptions{IncludedNamespaces: []string{"demo"}}})
		require.NoError(t, err)
		require.Equal(t, "0 2 * * *", s.Spec.Schedule)
		require.Eventually(t, func() bool {
			got, err := a.velero.Schedule(ctx, "nightly")
			return err == nil && got.Status.Phase == "Enabled"
		}, time.Minute, 250*time.Millisecond, "Velero never enabled the schedule")
		_, err = a.velero.CreateSchedule(ctx, backup.ScheduleOptions{Name: "bad-cron", Cron: "every day"})
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			got, err := a.velero.Schedule(ctx, "bad-cron")
			return err == nil && got.Status.Phase == "FailedValidation" && len(got.Status.ValidationErrors) > 0
		}, time.Minute, 250*time.Millisecond, "Velero accepted a malformed cron expression")
		_, err = a.velero.ScheduleBackups(ctx, "not a label value")
		require.ErrorIs(t, err, backup.ErrInvalidConfig)
	})

	t.Run("schedule makes backups; pause and unpause", scheduleRuns(ctx, a, e))

	t.Run("retention deletes through DeleteBackupRequest", func(t *testing.T) {
		for _, name := range []string{"demo-2", "demo-3"} {
			_, err := a.velero.CreateBackup(ctx, backup.BackupOptions{Name: name, IncludedNamespaces: []string{"demo"}})
			require.NoError(t, err)
			_, err = a.velero.WaitBackup(ctx, name, backup.WaitOptions{})
			require.NoError(t, err)
		}
		keysBefore := e.bucket.KeysT(t)
		require.True(t, slices.ContainsFunc(keysBefore, func(k string) bool { return strings.HasPrefix(k, "backups/demo-1/") }))
		all, err := a.velero.Backups(ctx, "")
		require.NoError(t, err)
		plan, err := backup.PlanRetention(all, backup.Policy{KeepLast: 1})
		require.NoError(t, err)
		t.Logf("retention plan:\n%s", plan)
		require.Equal(t, []string{"demo-3"}, names(plan.Keep[:1]))
		deleted, err := a.velero.ExecuteRetention(ctx, plan)
		require.NoError(t, err)
		require.ElementsMatch(t, []string{"demo-1", "demo-2"}, deleted)
		require.Equal(t, []string{"demo-3"}, e.backupsInBucket(t, ctx, store))
		// Re-applying the same plan is safe: the backups are gone already.
		_, err = a.velero.ExecuteRetention(ctx, plan)
		require.NoError(t, err)
	})
}

func names(ds []backup.Decision) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Backup)
	}
	return out
}

func createDemo(t *testing.T, ctx context.Context, c *cluster) {
	t.Helper()
	ext, err := apiextclient.NewForConfig(c.rc)
	require.NoError(t, err)
	preserve := true
	crd := &apiextv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com"},
		Spec: apiextv1.CustomResourceDefinitionSpec{
			Group: "example.com", Scope: apiextv1.NamespaceScoped,
			Names: apiextv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Versions: []apiextv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextv1.CustomResourceValidation{OpenAPIV3Schema: &apiextv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: &preserve}}}},
		},
	}
	_, err = ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		_, err := c.dyn.Resource(demoResources[4]).Namespace("default").List(ctx, metav1.ListOptions{})
		return err == nil
	}, 30*time.Second, 200*time.Millisecond)
	_, err = c.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	for _, doc := range strings.Split(demoObjects, "\n---\n") {
		var obj unstructured.Unstructured
		require.NoError(t, yaml.Unmarshal([]byte(doc), &obj.Object))
		gvr := resourceFor(obj.GetKind())
		_, err := c.dyn.Resource(gvr).Namespace("demo").Create(ctx, &obj, metav1.CreateOptions{})
		require.NoError(t, err, "create %s", obj.GetName())
	}
}

func resourceFor(kind string) schema.GroupVersionResource {
	for _, r := range demoResources {
		if strings.EqualFold(r.Resource, kind+"s") {
			return r
		}
	}
	panic("unknown kind " + kind)
}

// deleteDemo deletes every demo object and the namespace. The environment
// runs no namespace controller, so the test empties the namespace and
// finalizes it itself.
func deleteDemo(t *testing.T, ctx context.Context, c *cluster) {
	t.Helper()
	for _, r := range demoResources {
		require.NoError(t, c.dyn.Resource(r).Namespace("demo").DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}))
	}
	require.NoError(t, c.kube.CoreV1().Namespaces().Delete(ctx, "demo", metav1.DeleteOptions{}))
	ns, err := c.kube.CoreV1().Namespaces().Get(ctx, "demo", metav1.GetOptions{})
	if err == nil {
		ns.Spec.Finalizers = nil
		_, err = c.kube.CoreV1().Namespaces().Finalize(ctx, ns, metav1.UpdateOptions{})
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool {
		_, err := c.kube.CoreV1().Namespaces().Get(ctx, "demo", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}, time.Minute, 200*time.Millisecond)
	require.Empty(t, snapshot(t, ctx, c))
}

// snapshot returns the demo objects by "kind/name", reduced to what a
// restore must bring back: labels and annotations (without Velero's own),
// data, and spec (without the service's allocated cluster IPs).
func snapshot(t *testing.T, ctx context.Context, c *cluster) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, r := range demoResources {
		list, err := c.dyn.Resource(r).Namespace("demo").List(ctx, metav1.ListOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		require.NoError(t, err)
		for _, obj := range list.Items {
			shape := map[string]any{"labels": dropVelero(obj.GetLabels()), "annotations": dropVelero(obj.GetAnnotations())}
			for _, f := range []string{"data", "spec", "type"} {
				if v, ok := obj.Object[f]; ok {
					shape[f] = v
				}
			}
			if obj.GetKind() == "Service" {
				spec := shape["spec"].(map[string]any)
				for _, f := range []string{"clusterIP", "clusterIPs"} {
					delete(spec, f)
				}
			}
			out[fmt.Sprintf("%s/%s", obj.GetKind(), obj.GetName())] = shape
		}
	}
	return out
}

func dropVelero(m map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if !strings.HasPrefix(k, "velero.io/") {
			out[k] = v
		}
	}
	return out
}
