package main

import (
	"context"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	velerov1 "github.com/vmware-tanzu/velero/pkg/apis/velero/v1"

	"github.com/cozystack/tenantkit/backup"
	"github.com/cozystack/tenantkit/cli"
	"github.com/cozystack/tenantkit/localenv"
)

var demoKinds = map[string]schema.GroupVersionResource{
	"ConfigMap":  {Version: "v1", Resource: "configmaps"},
	"Secret":     {Version: "v1", Resource: "secrets"},
	"Service":    {Version: "v1", Resource: "services"},
	"Deployment": {Group: "apps", Version: "v1", Resource: "deployments"},
}

// demoBucket is the Bucket application's user whose credentials Velero
// uses.
var demoBucket = backup.BucketRef{Namespace: "tenant-demo", Bucket: "velero-backups", User: "velero"}

const demoYAML = `
apiVersion: v1
kind: ConfigMap
metadata: {name: demo-cm, namespace: demo}
data: {marker: backup-restore-validation}
---
apiVersion: v1
kind: Secret
metadata: {name: demo-secret, namespace: demo}
stringData: {token: not-a-real-token}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: demo, labels: {app: web}}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: "nginx:1.27"}]}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: demo}
spec: {selector: {app: web}, ports: [{port: 80}]}
`

// runDemo is the embedded tour.
func runDemo(parent context.Context, o *options) error {
	ctx, cancel := o.withTimeout(parent)
	defer cancel()
	env, err := localenv.OpenTarget(ctx, &o.target, "etcd, kube-apiserver", localenv.Config{EtcdMembers: 1})
	if err != nil {
		return err
	}
	defer o.target.Close()
	kube, err := kubernetes.NewForConfig(o.target.RESTConfig)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(o.target.RESTConfig)
	if err != nil {
		return err
	}

	step := cli.Step(o.progress, "starting an S3 server (versitygw) with bucket velero-backups")
	s3, err := env.StartS3(ctx, localenv.S3Config{Buckets: []string{"velero-backups"}})
	step.Done(err)
	if err != nil {
		return cli.WithCode(cli.ExitUnavailable, err)
	}

	fmt.Fprintln(o.out, "\n1. The Bucket's Secret, as Cozystack derives it, in the tenant namespace")
	if err := createBucketSecret(ctx, kube, s3); err != nil {
		return err
	}
	creds, err := backup.LoadCredentials(ctx, kube, demoBucket)
	if err != nil {
		return err
	}
	fmt.Fprintf(o.out, "   %s\n", creds)

	fmt.Fprintln(o.out, "\n2. The Velero addon values (spec.addons.velero.valuesOverride)")
	values, err := backup.AddonValues(creds, backup.ValuesOptions{})
	if err != nil {
		return err
	}
	fmt.Fprintln(o.out, indent(values.String(), "   "))

	step = cli.Step(o.progress, "starting Velero v1.18.3 with velero-plugin-for-aws (out of cluster)")
	_, err = env.StartVelero(ctx, localenv.VeleroConfig{Namespace: o.namespace})
	step.Done(err)
	if err != nil {
		return cli.WithCode(cli.ExitUnavailable, err)
	}
	c, err := backup.NewForConfig(o.target.RESTConfig, backup.Config{Namespace: o.namespace, PollInterval: 250 * time.Millisecond})
	if err != nil {
		return err
	}
	fmt.Fprintln(o.out, "\n3. The backup storage location (what the addon chart creates from the values)")
	if _, err := c.ApplyLocation(ctx, backup.LocationSpec{Credentials: creds, CACertPEM: s3.CAPEM}); err != nil {
		return err
	}
	step = cli.Step(o.progress, "waiting for location default to be Available")
	bsl, err := c.WaitLocationAvailable(ctx, "default")
	step.Done(err)
	if err != nil {
		return cli.WithCode(cli.ExitFailure, err)
	}
	cli.Table(o.out, []string{"NAME", "PROVIDER", "BUCKET", "PHASE", "ACCESS MODE", "DEFAULT"},
		[][]string{{bsl.Name, bsl.Spec.Provider, bsl.Spec.ObjectStorage.Bucket, string(bsl.Status.Phase), string(bsl.Spec.AccessMode), fmt.Sprint(bsl.Spec.Default)}})

	fmt.Fprintln(o.out, "\n4. Back up namespace demo")
	if err := applyDemo(ctx, kube, dyn); err != nil {
		return err
	}
	before, err := snapshot(ctx, dyn)
	if err != nil {
		return err
	}
	if _, err := c.CreateBackup(ctx, backup.BackupOptions{Name: "demo-1", IncludedNamespaces: []string{"demo"}}); err != nil {
		return err
	}
	if _, err := waitBackup(ctx, o, c, "demo-1"); err != nil {
		return err
	}

	fmt.Fprintln(o.out, "\n5. Verify it straight from S3 (no Velero involved)")
	objects, err := backup.NewS3Objects(backup.S3Config{Credentials: creds, CACertPEM: s3.CAPEM})
	if err != nil {
		return err
	}
	store, err := backup.NewStore(backup.StoreConfig{Objects: objects})
	if err != nil {
		return err
	}
	if err := verify(ctx, o, store, objects.String(), "demo-1"); err != nil {
		return err
	}

	fmt.Fprintln(o.out, "\n6. Delete namespace demo, restore it, compare")
	if err := deleteDemo(ctx, o.progress, kube, dyn); err != nil {
		return err
	}
	fmt.Fprintln(o.out, "   The preview: what the restore will do, item by item (nothing is changed)")
	if err := preview(ctx, o, store, "demo-1", velerov1.RestoreSpec{}, false); err != nil {
		return err
	}
	if _, err := c.CreateRestore(ctx, backup.RestoreOptions{Name: "demo-1-restore", BackupName: "demo-1"}); err != nil {
		return err
	}
	if err := waitRestore(ctx, o, c, "demo-1-restore"); err != nil {
		return err
	}
	r, err := c.Restore(ctx, "demo-1-restore")
	if err != nil {
		return err
	}
	if err := check(ctx, o, store, r, nil); err != nil {
		return err
	}
	after, err := snapshot(ctx, dyn)
	if err != nil {
		return err
	}
	var rows [][]string
	diffs := 0
	for _, k := range sortedKeys(before) {
		same := reflect.DeepEqual(before[k], after[k])
		if !same {
			diffs++
		}
		rows = append(rows, []string{k, map[bool]string{true: "identical", false: "DIFFERS"}[same]})
	}
	cli.Table(o.out, []string{"OBJECT", "AFTER RESTORE"}, rows)
	if diffs > 0 || len(after) != len(before) {
		return cli.WithCode(cli.ExitFailure, fmt.Errorf("%d objects differ after the restore", diffs))
	}
	fmt.Fprintln(o.out, "\nThe diff is empty: every object came back with its data.")
	return nil
}

// createBucketSecret writes the Bucket's credentials Secret into tenant
// namespace tenant-demo, as Cozystack derives it from a Bucket application
// (here, for the embedded S3 server).
func createBucketSecret(ctx context.Context, kube kubernetes.Interface, s3 *localenv.S3Server) error {
	_, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tenant-demo"}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	secret := backup.CredentialsSecret(demoBucket, backup.Credentials{Bucket: "velero-backups", Endpoint: s3.Endpoint, AccessKeyID: s3.AccessKey, SecretAccessKey: s3.SecretKey})
	_, err = kube.CoreV1().Secrets(secret.Namespace).Create(ctx, secret, metav1.CreateOptions{})
	return err
}

func applyDemo(ctx context.Context, kube kubernetes.Interface, dyn dynamic.Interface) error {
	_, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo"}}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	objs, err := demoObjects()
	if err != nil {
		return err
	}
	for _, obj := range objs {
		if _, err := dyn.Resource(demoKinds[obj.GetKind()]).Namespace("demo").Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
	}
	return nil
}

// demoObjects returns the objects of demoYAML.
func demoObjects() ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, doc := range strings.Split(demoYAML, "\n---\n") {
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &obj.Object); err != nil {
			return nil, err
		}
		out = append(out, obj)
	}
	return out, nil
}

// deleteDemo empties and deletes the namespace. The embedded environment
// runs no namespace controller, so the example finalizes the namespace
// itself once it is empty.
func deleteDemo(ctx context.Context, progress io.Writer, kube kubernetes.Interface, dyn dynamic.Interface) error {
	step := cli.Step(progress, "deleting namespace demo")
	err := func() error {
		for _, gvr := range demoKinds {
			if err := dyn.Resource(gvr).Namespace("demo").DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
				return err
			}
		}
		if err := kube.CoreV1().Namespaces().Delete(ctx, "demo", metav1.DeleteOptions{}); err != nil {
			return err
		}
		ns, err := kube.CoreV1().Namespaces().Get(ctx, "demo", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		ns.Spec.Finalizers = nil
		_, err = kube.CoreV1().Namespaces().Finalize(ctx, ns, metav1.UpdateOptions{})
		return err
	}()
	step.Done(err)
	return err
}

// snapshot returns the demo objects' labels, data and spec by kind/name
// (the Service's allocated cluster IPs, Velero's own labels and the
// objects a cluster's controllers add to the namespace, such as the
// ConfigMap kube-root-ca.crt, left out).
func snapshot(ctx context.Context, dyn dynamic.Interface) (map[string]map[string]any, error) {
	objs, err := demoObjects()
	if err != nil {
		return nil, err
	}
	demo := map[string]bool{}
	for _, obj := range objs {
		demo[obj.GetKind()+"/"+obj.GetName()] = true
	}
	out := map[string]map[string]any{}
	for kind, gvr := range demoKinds {
		list, err := dyn.Resource(gvr).Namespace("demo").List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		for _, obj := range list.Items {
			if !demo[kind+"/"+obj.GetName()] {
				continue
			}
			labels := map[string]string{}
			for k, v := range obj.GetLabels() {
				if !strings.HasPrefix(k, "velero.io/") {
					labels[k] = v
				}
			}
			shape := map[string]any{"labels": labels, "data": obj.Object["data"], "spec": obj.Object["spec"]}
			if spec, ok := obj.Object["spec"].(map[string]any); ok && kind == "Service" {
				delete(spec, "clusterIP")
				delete(spec, "clusterIPs")
			}
			out[kind+"/"+obj.GetName()] = shape
		}
	}
	return out, nil
}

func sortedKeys(m map[string]map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+prefix)
}
