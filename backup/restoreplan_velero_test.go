package backup_test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	velerov1 "github.com/vmware-tanzu/velero/pkg/apis/velero/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/cozystack/tenantkit/backup"
	"github.com/cozystack/tenantkit/localenv"
)

var (
	gadgets      = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "gadgets"}
	clusterRoles = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}
	namespacesR  = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	veleroBackup = schema.GroupVersionResource{Group: "velero.io", Version: "v1", Resource: "backups"}
	veleroRest   = schema.GroupVersionResource{Group: "velero.io", Version: "v1", Resource: "restores"}
	// genKinds are the namespaced kinds the test generates.
	genKinds = []schema.GroupVersionResource{
		{Version: "v1", Resource: "serviceaccounts"}, {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"},
		{Version: "v1", Resource: "configmaps"}, {Version: "v1", Resource: "secrets"},
		{Version: "v1", Resource: "services"}, {Group: "apps", Version: "v1", Resource: "deployments"}, gadgets,
		{Version: "v1", Resource: "pods"}, {Group: "batch", Version: "v1", Resource: "jobs"},
	}
)

// restoreSeed returns TENANTKIT_RESTORE_SEED, or a new seed to log.
func restoreSeed() uint64 {
	if v, err := strconv.ParseUint(os.Getenv("TENANTKIT_RESTORE_SEED"), 10, 64); err == nil {
		return v
	}
	return uint64(time.Now().UnixNano())
}

// TestRestorePlanAgainstVelero seeds generated namespaces of mixed
// objects (pending pods, suspended jobs, service-account token secrets
// with and without their account, NodePort Services whose node port the
// client set), backs them up with the real Velero, changes the cluster at
// random, and then, for restores under each existingResourcePolicy, with
// namespace mappings (onto a copy, onto another restored namespace, onto
// an invalid name) and every selector operator (and one Velero cannot
// convert), checks that Velero's restored-resource list
// is the preview's, item by item, that its restore log restores the
// resources in the preview's order, and that CheckRestore finds nothing
// missing. Replay a failure with TENANTKIT_RESTORE_SEED.
func TestRestorePlanAgainstVelero(t *testing.T) {
	seed := restoreSeed()
	t.Logf("seed %d (TENANTKIT_RESTORE_SEED=%d replays it)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	e := startS3(t, localenv.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 18*time.Minute)
	defer cancel()
	a := newCluster(t, e.env.RESTConfig())
	createGadgetCRD(t, ctx, a)
	seedObjects(t, ctx, a, rng)
	seedIssue44(t, ctx, a, rng)

	_, err := e.env.StartVelero(ctx, localenv.VeleroConfig{})
	require.NoError(t, err)
	_, err = a.velero.ApplyLocation(ctx, backup.LocationSpec{Credentials: e.creds, CACertPEM: e.s3.CAPEM})
	require.NoError(t, err)
	_, err = a.velero.WaitLocationAvailable(ctx, "default")
	require.NoError(t, err)
	yes := true
	createVelero(t, ctx, a, veleroBackup, &velerov1.Backup{ObjectMeta: metav1.ObjectMeta{Name: "gen"},
		Spec: velerov1.BackupSpec{IncludedNamespaces: []string{"gen-*"}, IncludeClusterResources: &yes,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"tenantkit.io/gen": "1"}}}})
	_, err = a.velero.WaitBackup(ctx, "gen", backup.WaitOptions{})
	require.NoError(t, err)
	store := e.store(t, backup.S3Config{}, "")
	target, err := backup.NewRestoreTarget(a.rc)
	require.NoError(t, err)

	o := &oracle{t: t, ctx: ctx, c: a, store: store, target: target, rng: rng, seed: seed}
	restore := o.restore
	restore("gen-none", velerov1.RestoreSpec{})
	restore("gen-update", velerov1.RestoreSpec{ExistingResourcePolicy: velerov1.PolicyTypeUpdate})
	dropNamespace(t, ctx, a, "gen-2")
	restore("gen-none-explicit", velerov1.RestoreSpec{ExistingResourcePolicy: velerov1.PolicyTypeNone,
		ExcludedResources: []string{"secrets"}, RestoreStatus: &velerov1.RestoreStatusSpec{IncludedResources: []string{"gadgets.example.com"}}})
	restore("gen-mapped", velerov1.RestoreSpec{IncludedNamespaces: []string{"gen-0"},
		NamespaceMapping: map[string]string{"gen-0": "gen-0-copy"},
		LabelSelector:    &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"b"}}}}})
	no := false
	restore("gen-or", velerov1.RestoreSpec{ExcludedNamespaces: []string{"gen-1"}, IncludeClusterResources: &no,
		OrLabelSelectors: []*metav1.LabelSelector{{MatchLabels: map[string]string{"tier": "a"}}, {MatchLabels: map[string]string{"app": "con-0"}}}})
	issue44Restores(restore)
	t.Logf("agreement with Velero: %d of %d items (seed %d); by decision: %s", o.agree, o.total, seed, o.byDecision())
}

// oracle runs restores with a preview before each and Velero as the
// judge of the preview.
type oracle struct {
	t            *testing.T
	ctx          context.Context
	c            *cluster
	store        *backup.Store
	target       backup.RestoreTarget
	rng          *rand.Rand
	seed         uint64
	agree, total int
	by           map[string][2]int // decision -> agreed, items
}

// restore changes the cluster at random, previews restore name, runs it
// with Velero and requires Velero's restored-resource list to be the
// preview's, and CheckRestore to find nothing missing or different.
func (o *oracle) restore(name string, spec velerov1.RestoreSpec) {
	t, ctx, a, store, seed := o.t, o.ctx, o.c, o.store, o.seed
	t.Helper()
	mutate(t, ctx, a, o.rng)
	before := versions(t, ctx, a)
	plan, err := store.PlanRestore(ctx, "gen", o.target, backup.PlanOptions{Spec: spec})
	require.NoError(t, err)
	require.Equal(t, before, versions(t, ctx, a), "a preview changed the cluster")
	t.Logf("%s: %s", name, plan)
	spec.BackupName = "gen"
	createVelero(t, ctx, a, veleroRest, &velerov1.Restore{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec})
	r, err := a.velero.WaitRestore(ctx, name, backup.WaitOptions{})
	if err != nil {
		// Velero's errors (a failed item, a restore failed before any
		// item) end it PartiallyFailed; the plan predicts those items.
		require.NotNil(t, r, "%v", err)
		require.Equal(t, velerov1.RestorePhasePartiallyFailed, r.Status.Phase, "%v", err)
	}
	var velero map[string]string
	require.Eventually(t, func() bool {
		velero, err = store.RestoredResources(ctx, name)
		return err == nil
	}, time.Minute, 250*time.Millisecond, "Velero's restored-resource list never appeared")
	planned := plan.VeleroResults()
	diff := backup.CompareResults(planned, velero)
	// Every item of the plan counts (those Velero does not list agree
	// when the plan says it will not list them), and so does every item
	// Velero lists that the plan lacks.
	items := len(plan.Items)
	for id := range velero {
		if _, ok := planned[id]; !ok {
			items++
		}
	}
	o.total += items
	o.agree += items - len(diff)
	o.tally(plan, velero, diff)
	require.Empty(t, diff, "preview and Velero disagree (seed %d)", seed)
	require.Equal(t, planOrder(plan), veleroOrder(t, ctx, store, name), "restore order (seed %d)", seed)
	check, err := store.CheckRestore(ctx, name, o.target, backup.CheckOptions{Backup: "gen", Spec: spec, Plan: plan})
	require.NoError(t, err)
	require.Empty(t, check.Missing, "seed %d", seed)
	require.Empty(t, check.Different, "seed %d", seed)
	require.True(t, check.OK())
}

func createVelero(t *testing.T, ctx context.Context, c *cluster, gvr schema.GroupVersionResource, obj runtime.Object) {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	require.NoError(t, err)
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion("velero.io/v1")
	u.SetKind(map[string]string{"backups": "Backup", "restores": "Restore"}[gvr.Resource])
	_, err = c.dyn.Resource(gvr).Namespace("cozy-velero").Create(ctx, u, metav1.CreateOptions{})
	require.NoError(t, err)
}

func createGadgetCRD(t *testing.T, ctx context.Context, c *cluster) {
	t.Helper()
	ext, err := apiextclient.NewForConfig(c.rc)
	require.NoError(t, err)
	preserve := true
	_, err = ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, &apiextv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "gadgets.example.com", Labels: map[string]string{"tenantkit.io/gen": "1"}},
		Spec: apiextv1.CustomResourceDefinitionSpec{Group: "example.com", Scope: apiextv1.NamespaceScoped,
			Names: apiextv1.CustomResourceDefinitionNames{Plural: "gadgets", Singular: "gadget", Kind: "Gadget", ListKind: "GadgetList"},
			Versions: []apiextv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextv1.CustomResourceValidation{OpenAPIV3Schema: &apiextv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: &preserve}}}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		_, err := c.dyn.Resource(gadgets).Namespace("default").List(ctx, metav1.ListOptions{})
		return err == nil
	}, 30*time.Second, 200*time.Millisecond)
}

// genObject returns a generated object of kind gvr.
func genObject(gvr schema.GroupVersionResource, ns, name string, rng *rand.Rand) *unstructured.Unstructured {
	tier := []string{"a", "b"}[rng.IntN(2)]
	md := map[string]any{"name": name, "namespace": ns, "labels": map[string]any{"tenantkit.io/gen": "1", "tier": tier, "app": name}}
	val := fmt.Sprintf("v%d", rng.IntN(1000))
	var obj map[string]any
	switch gvr.Resource {
	case "configmaps":
		obj = map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"k": val}}
	case "secrets":
		obj = map[string]any{"apiVersion": "v1", "kind": "Secret", "type": "Opaque", "stringData": map[string]any{"k": val}}
	case "services":
		obj = map[string]any{"apiVersion": "v1", "kind": "Service", "spec": map[string]any{
			"selector": map[string]any{"app": name}, "ports": []any{map[string]any{"name": "http", "port": int64(80)}}}}
	case "deployments":
		obj = map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "spec": map[string]any{
			"replicas": int64(1), "selector": map[string]any{"matchLabels": map[string]any{"app": name}},
			"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": name}},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx:" + val}}}}}}
	case "serviceaccounts":
		obj = map[string]any{"apiVersion": "v1", "kind": "ServiceAccount", "imagePullSecrets": []any{map[string]any{"name": "pull-" + val}}}
	case "rolebindings":
		obj = map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
			"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "gen-reader"},
			"subjects": []any{map[string]any{"kind": "ServiceAccount", "name": "ser-" + val, "namespace": ns}}}
	case "gadgets":
		obj = map[string]any{"apiVersion": "example.com/v1", "kind": "Gadget", "spec": map[string]any{"size": int64(rng.IntN(9)), "v": val}}
	case "pods":
		// Pending for good: the environment runs no scheduler (and no
		// node name, so a delete is immediate).
		obj = map[string]any{"apiVersion": "v1", "kind": "Pod", "spec": map[string]any{
			"containers": []any{map[string]any{"name": "c", "image": "nginx:" + val}}}}
	case "jobs":
		// Suspended: the apiserver still adds the controller-uid selector
		// and labels Velero's job action strips.
		obj = map[string]any{"apiVersion": "batch/v1", "kind": "Job", "spec": map[string]any{"suspend": true,
			"template": map[string]any{"spec": map[string]any{"restartPolicy": "Never",
				"containers": []any{map[string]any{"name": "c", "image": "busybox:" + val}}}}}}
	}
	obj["metadata"] = md
	return &unstructured.Unstructured{Object: obj}
}

// seedObjects creates namespaces gen-0..gen-2 with 1-3 objects of each
// kind, and a cluster-scoped ClusterRole, all labelled for the backup.
func seedObjects(t *testing.T, ctx context.Context, c *cluster, rng *rand.Rand) {
	t.Helper()
	for i := range 3 {
		ns := fmt.Sprintf("gen-%d", i)
		_, err := c.dyn.Resource(namespacesR).Create(ctx, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns, "labels": map[string]any{"tenantkit.io/gen": "1"}}}}, metav1.CreateOptions{})
		require.NoError(t, err)
		for _, gvr := range genKinds {
			for j := range 1 + rng.IntN(3) {
				_, err := c.dyn.Resource(gvr).Namespace(ns).Create(ctx, genObject(gvr, ns, fmt.Sprintf("%s-%d", gvr.Resource[:3], j), rng), metav1.CreateOptions{})
				require.NoError(t, err)
			}
		}
	}
	_, err := c.dyn.Resource(clusterRoles).Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
		"metadata": map[string]any{"name": "gen-reader", "labels": map[string]any{"tenantkit.io/gen": "1"}},
		"rules":    []any{map[string]any{"apiGroups": []any{""}, "resources": []any{"configmaps"}, "verbs": []any{"get"}}}}}, metav1.CreateOptions{})
	require.NoError(t, err)
}

// mutate changes the cluster at random: deletes objects, edits others,
// and replaces some with new objects of the same name.
func mutate(t *testing.T, ctx context.Context, c *cluster, rng *rand.Rand) {
	t.Helper()
	for i := range 3 {
		ns := fmt.Sprintf("gen-%d", i)
		for _, gvr := range genKinds {
			list, err := c.dyn.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
			require.NoError(t, err)
			for _, obj := range list.Items {
				r := c.dyn.Resource(gvr).Namespace(ns)
				switch rng.IntN(5) {
				case 0:
					require.NoError(t, r.Delete(ctx, obj.GetName(), deleteNow))
				case 1:
					l := obj.GetLabels()
					l["edited"] = strconv.Itoa(rng.IntN(100))
					obj.SetLabels(l)
					_, err := r.Update(ctx, &obj, metav1.UpdateOptions{})
					require.NoError(t, err)
				case 2:
					require.NoError(t, r.Delete(ctx, obj.GetName(), deleteNow))
					_, err := r.Create(ctx, genObject(gvr, ns, obj.GetName(), rng), metav1.CreateOptions{})
					require.NoError(t, err)
				}
			}
		}
	}
}

// deleteNow deletes with background propagation: a batch/v1 Job defaults
// to orphaning its pods, a finalizer only the garbage collector (not
// running here) removes, so a plain delete would leave the Job terminating
// (its re-create fails AlreadyExists, and it outlives its namespace).
var deleteNow = metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}

// versions returns the resourceVersion of every generated object.
func versions(t *testing.T, ctx context.Context, c *cluster) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, gvr := range append(append([]schema.GroupVersionResource{}, genKinds...), clusterRoles, namespacesR) {
		list, err := c.dyn.Resource(gvr).List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		for _, o := range list.Items {
			out[gvr.Resource+" "+o.GetNamespace()+"/"+o.GetName()] = o.GetResourceVersion()
		}
	}
	return out
}

// dropNamespace deletes namespace ns and everything generated in it. The
// environment runs no namespace controller, so the test empties and
// finalizes the namespace itself.
func dropNamespace(t *testing.T, ctx context.Context, c *cluster, ns string) {
	t.Helper()
	for _, gvr := range genKinds {
		require.NoError(t, c.dyn.Resource(gvr).Namespace(ns).DeleteCollection(ctx, deleteNow, metav1.ListOptions{}))
	}
	require.NoError(t, c.kube.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}))
	if got, err := c.kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err == nil {
		got.Spec.Finalizers = nil
		_, err = c.kube.CoreV1().Namespaces().Finalize(ctx, got, metav1.UpdateOptions{})
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool {
		_, err := c.kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}, time.Minute, 200*time.Millisecond)
}

// planOrder returns the resources of the items Velero's restore log will
// name ("Restored N items", logged for every item restoreItem sees,
// skipped and failed ones too), in the plan's order, each once. Velero
// never sees the excluded items, those of the resources it never
// restores, nor those whose target namespace it could not create.
func planOrder(plan *backup.RestorePlan) []string {
	var out []string
	for _, it := range plan.Items {
		switch {
		case it.Action == backup.RestoreExcluded, it.Action == backup.RestoreFail && it.VeleroResult == "",
			it.Action == backup.RestoreNever && strings.HasPrefix(it.Reason, "Velero never restores"):
			continue
		}
		if it.Resource != "namespaces" && (len(out) == 0 || out[len(out)-1] != it.Resource) {
			out = append(out, it.Resource)
		}
	}
	return out
}

// veleroOrder returns the resources in the order Velero's restore log
// reports restoring them ("Restored N items out of ...", restore.go:1084).
func veleroOrder(t *testing.T, ctx context.Context, store *backup.Store, name string) []string {
	t.Helper()
	rc, err := store.RestoreLogs(ctx, name)
	require.NoError(t, err)
	defer rc.Close()
	var out []string
	sc := bufio.NewScanner(rc)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, `msg="Restored `) {
			continue
		}
		_, rest, ok := strings.Cut(line, " resource=")
		require.True(t, ok, line)
		res, _, _ := strings.Cut(rest, " ")
		if len(out) == 0 || out[len(out)-1] != res {
			out = append(out, res)
		}
	}
	require.NoError(t, sc.Err())
	return out
}
