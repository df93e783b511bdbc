package backup

import (
	"testing"

	"github.com/stretchr/testify/require"
	velerov1 "github.com/vmware-tanzu/velero/pkg/apis/velero/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func svc(annotations map[string]any, managed []any, ports ...any) map[string]any {
	md := map[string]any{"name": "s", "namespace": "a"}
	if annotations != nil {
		md["annotations"] = annotations
	}
	if managed != nil {
		md["managedFields"] = managed
	}
	return map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": md,
		"spec": map[string]any{"type": "NodePort", "clusterIP": "10.0.0.1", "ports": ports}}
}

func port(name string, p, nodePort int64) map[string]any {
	out := map[string]any{"port": p, "protocol": "TCP", "nodePort": nodePort}
	if name != "" {
		out["name"] = name
	}
	return out
}

// TestServiceActionNodePorts: Velero keeps the node ports someone set
// (last-applied-configuration, or any managedFields entry) and clears the
// allocated ones (service_action.go:148-256).
func TestServiceActionNodePorts(t *testing.T) {
	byCreate := []any{map[string]any{"manager": "kubectl-create", "operation": "Update", "fieldsType": "FieldsV1",
		"fieldsV1": map[string]any{"f:spec": map[string]any{"f:ports": map[string]any{
			`k:{"port":80,"protocol":"TCP"}`: map[string]any{"f:nodePort": map[string]any{}, "f:port": map[string]any{}}}}}}}
	for _, c := range []struct {
		name     string
		obj      map[string]any
		preserve bool
		want     []int64
	}{
		{"allocated: cleared", svc(nil, nil, port("http", 80, 31000)), false, []int64{0}},
		{"set at create (managedFields): kept", svc(nil, byCreate, port("http", 80, 31999), port("b", 81, 31001)), false, []int64{31999, 0}},
		{"last-applied names it: kept", svc(map[string]any{"kubectl.kubernetes.io/last-applied-configuration": `{"spec":{"ports":[{"name":"http","nodePort":31999}]}}`},
			byCreate, port("http", 80, 31999), port("b", 81, 31001)), false, []int64{31999, 0}},
		{"last-applied wins over managedFields", svc(map[string]any{"kubectl.kubernetes.io/last-applied-configuration": `{"spec":{"ports":[{"name":"b","port":81}]}}`},
			byCreate, port("http", 80, 31999)), false, []int64{0}},
		{"unnamed port by value", svc(map[string]any{"kubectl.kubernetes.io/last-applied-configuration": `{"spec":{"ports":[{"nodePort":"31999"}]}}`},
			nil, port("", 80, 31999)), false, []int64{31999}},
		{"preserveNodePorts keeps all", svc(nil, nil, port("http", 80, 31000)), true, []int64{31000}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := applyRestoreAction("services", c.obj, nil, c.preserve)
			require.NoError(t, err)
			ports, _, _ := unstructured.NestedSlice(out, "spec", "ports")
			var got []int64
			for _, p := range ports {
				n, _, _ := unstructured.NestedInt64(p.(map[string]any), "nodePort")
				got = append(got, n)
			}
			require.Equal(t, c.want, got)
			_, hasIP, _ := unstructured.NestedString(out, "spec", "clusterIP")
			require.False(t, hasIP)
		})
	}
	_, err := applyRestoreAction("services", svc(map[string]any{"kubectl.kubernetes.io/last-applied-configuration": "{"}, nil, port("a", 80, 1)), nil, false)
	require.Error(t, err, "Velero's action fails on a last-applied-configuration that is not JSON")
}

// TestPodAndJobActions: the pod action drops the node name, priority and
// token volumes; the job action the controller-uid labels.
func TestPodAndJobActions(t *testing.T) {
	pod := map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "p"},
		"spec": map[string]any{"nodeName": "n1", "priority": int64(0), "serviceAccountName": "app",
			"volumes": []any{map[string]any{"name": "app-token-x"}, map[string]any{"name": "data"}},
			"containers": []any{map[string]any{"name": "c", "image": "i",
				"volumeMounts": []any{map[string]any{"name": "app-token-x", "mountPath": "/t"}, map[string]any{"name": "data", "mountPath": "/d"}}}}}}
	out, err := applyRestoreAction("pods", pod, nil, false)
	require.NoError(t, err)
	spec := out["spec"].(map[string]any)
	require.NotContains(t, spec, "nodeName")
	require.NotContains(t, spec, "priority")
	require.Equal(t, []any{map[string]any{"name": "data"}}, spec["volumes"])
	require.Len(t, spec["containers"].([]any)[0].(map[string]any)["volumeMounts"], 1)

	uid := map[string]any{"controller-uid": "u", "batch.kubernetes.io/controller-uid": "u", "app": "x"}
	job := map[string]any{"apiVersion": "batch/v1", "kind": "Job", "metadata": map[string]any{"name": "j"},
		"spec": map[string]any{"selector": map[string]any{"matchLabels": uid},
			"template": map[string]any{"metadata": map[string]any{"labels": uid}, "spec": map[string]any{}}}}
	out, err = applyRestoreAction("jobs.batch", job, nil, false)
	require.NoError(t, err)
	sel, _, _ := unstructured.NestedStringMap(out, "spec", "selector", "matchLabels")
	require.Equal(t, map[string]string{"app": "x"}, sel)
	tl, _, _ := unstructured.NestedStringMap(out, "spec", "template", "metadata", "labels")
	require.Equal(t, map[string]string{"app": "x"}, tl)
}

// TestUpdateRefused: a patch to the backed-up pod passes when only what
// the apiserver lets a pod change differs; a job's selector may not
// change.
func TestUpdateRefused(t *testing.T) {
	pl := &planner{}
	it := &PlanItem{Kind: "Pod"}
	live := map[string]any{"spec": map[string]any{"priority": int64(0), "containers": []any{map[string]any{"name": "c", "image": "new"}}}}
	backup := map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "old"}}}}
	require.Empty(t, pl.updateRefused("pods", it, backup, live))
	live = map[string]any{"spec": map[string]any{"nodeName": "n1", "containers": []any{map[string]any{"name": "c", "image": "i"}}}}
	backup = map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "i"}}}}
	require.Contains(t, pl.updateRefused("pods", it, backup, live), "spec.nodeName")
	live = map[string]any{"spec": map[string]any{"parallelism": int64(2), "selector": map[string]any{"matchLabels": map[string]any{"controller-uid": "u"}}}}
	backup = map[string]any{"spec": map[string]any{"parallelism": int64(1), "selector": map[string]any{"matchLabels": map[string]any{}}}}
	require.Contains(t, pl.updateRefused("jobs.batch", &PlanItem{Kind: "Job"}, backup, live), "spec.selector")
	require.Empty(t, pl.updateRefused("configmaps", it, backup, live))
}

// TestSettle: token secrets of an account that exists are skipped, and
// two items onto one target get "one of".
func TestSettle(t *testing.T) {
	pl := &planner{spec: velerov1.RestoreSpec{NamespaceMapping: map[string]string{"a": "b"}},
		cv: &clusterView{accounts: map[string]map[string]bool{"a": {"app": true}}}, diffs: map[int]map[string]any{}}
	pl.items = []PlanItem{
		{Resource: "secrets", APIVersion: "v1", Kind: "Secret", Namespace: "a", TargetNamespace: "b", Name: "app-token-x", Action: RestoreCreate, VeleroResult: "created"},
		{Resource: "secrets", APIVersion: "v1", Kind: "Secret", Namespace: "c", TargetNamespace: "c", Name: "web-token-y", Action: RestoreCreate, VeleroResult: "created"},
		{Resource: "serviceaccounts", APIVersion: "v1", Kind: "ServiceAccount", Namespace: "c", TargetNamespace: "c", Name: "web", Action: RestoreCreate, VeleroResult: "created"},
		{Resource: "configmaps", APIVersion: "v1", Kind: "ConfigMap", Namespace: "a", TargetNamespace: "b", Name: "x", Action: RestoreUpdate, VeleroResult: "updated"},
		{Resource: "configmaps", APIVersion: "v1", Kind: "ConfigMap", Namespace: "b", TargetNamespace: "b", Name: "x", Action: RestoreExistsIdentical, VeleroResult: "skipped"},
		{Resource: "secrets", APIVersion: "v1", Kind: "Secret", Namespace: "d", TargetNamespace: "d", Name: "app-token-z", Action: RestoreCreate, VeleroResult: "created"},
	}
	pl.tokens = []int{0, 1, 5}
	pl.settle()
	require.Equal(t, RestoreNever, pl.items[0].Action)
	require.Equal(t, "skipped", pl.items[0].VeleroResult)
	require.Equal(t, "skipped", pl.items[1].VeleroResult, "an account this restore creates first counts")
	require.Equal(t, "created", pl.items[5].VeleroResult, "no account app in d")
	require.Equal(t, "one of: skipped, updated", pl.items[3].VeleroResult)
	require.Equal(t, pl.items[3].VeleroResult, pl.items[4].VeleroResult)
	require.True(t, pl.collided[pl.items[3].ID()], "CheckRestore does not hold a collided item to its own data")
	require.Empty(t, CompareResults(map[string]string{"id": "one of: skipped, updated"}, map[string]string{"id": "updated"}))
	require.Len(t, CompareResults(map[string]string{"id": "one of: skipped, updated"}, map[string]string{"id": "failed"}), 1)
}

// TestRestoreFilterSpecs: a selector Velero cannot convert is a predicted
// failure, an invalid mapping target is recorded, and each refusal names
// its field.
func TestRestoreFilterSpecs(t *testing.T) {
	same := func(s string) string { return s }
	for _, op := range []metav1.LabelSelectorOperator{"Gt", "Lt", "Equals", metav1.LabelSelectorOpIn, metav1.LabelSelectorOpExists} {
		req := metav1.LabelSelectorRequirement{Key: "k", Operator: op}
		if op == metav1.LabelSelectorOpExists {
			req.Values = []string{"v"}
		}
		f, err := newRestoreFilter(velerov1.RestoreSpec{LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{req}}}, same)
		require.NoError(t, err, op)
		require.Contains(t, f.failure, "labelSelector", op)
		f, err = newRestoreFilter(velerov1.RestoreSpec{OrLabelSelectors: []*metav1.LabelSelector{{}, {MatchExpressions: []metav1.LabelSelectorRequirement{req}}}}, same)
		require.NoError(t, err, op)
		require.Contains(t, f.failure, "orLabelSelectors[1]", op)
	}
	for _, op := range []metav1.LabelSelectorOperator{metav1.LabelSelectorOpIn, metav1.LabelSelectorOpNotIn, metav1.LabelSelectorOpExists, metav1.LabelSelectorOpDoesNotExist} {
		req := metav1.LabelSelectorRequirement{Key: "k", Operator: op}
		if op == metav1.LabelSelectorOpIn || op == metav1.LabelSelectorOpNotIn {
			req.Values = []string{"v"}
		}
		f, err := newRestoreFilter(velerov1.RestoreSpec{LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{req}}}, same)
		require.NoError(t, err, op)
		require.Empty(t, f.failure, op)
	}
	f, err := newRestoreFilter(velerov1.RestoreSpec{NamespaceMapping: map[string]string{"a": "Bad_NS", "b": "good"}}, same)
	require.NoError(t, err)
	require.Contains(t, f.badTargets, "Bad_NS")
	require.NotContains(t, f.badTargets, "good")
	for _, c := range []struct {
		spec  velerov1.RestoreSpec
		field string
	}{
		{velerov1.RestoreSpec{IncludedResources: []string{"nodes"}}, "includedResources"},
		{velerov1.RestoreSpec{IncludedResources: []string{"*", "configmaps"}}, "includedResources"},
		{velerov1.RestoreSpec{ExcludedResources: []string{"*"}}, "excludedResources"},
		{velerov1.RestoreSpec{ExcludedNamespaces: []string{"*"}}, "excludedNamespaces"},
		{velerov1.RestoreSpec{IncludedNamespaces: []string{"a"}, ExcludedNamespaces: []string{"a"}}, "excludedNamespaces"},
		{velerov1.RestoreSpec{LabelSelector: &metav1.LabelSelector{}, OrLabelSelectors: []*metav1.LabelSelector{{}}}, "orLabelSelectors"},
		{velerov1.RestoreSpec{ExistingResourcePolicy: "replace"}, "existingResourcePolicy"},
	} {
		_, err := newRestoreFilter(c.spec, same)
		var serr *RestoreSpecError
		require.ErrorAs(t, err, &serr, "%+v", c.spec)
		require.Equal(t, c.field, serr.Field, "%+v", c.spec)
	}
}
