package backup_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	velerov1 "github.com/vmware-tanzu/velero/pkg/apis/velero/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/cozystack/tenantkit/backup"
)

// seedIssue44 adds what issue 44's classes need to each generated
// namespace: a ServiceAccount "tok" with its token secret
// "tok-token-<x>", a token secret of an account that does not exist,
// and a NodePort Service whose node port the client sets (so Velero
// keeps it). Pods and Jobs are among genKinds.
func seedIssue44(t *testing.T, ctx context.Context, c *cluster, rng *rand.Rand) {
	t.Helper()
	gen := map[string]any{"tenantkit.io/gen": "1", "tier": "a"}
	for i := range 3 {
		ns := fmt.Sprintf("gen-%d", i)
		suffix := fmt.Sprintf("%05x", rng.IntN(1<<20))
		for _, obj := range []map[string]any{
			{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": map[string]any{"name": "tok", "labels": gen}},
			tokenSecret("tok", "tok-token-"+suffix, gen),
			tokenSecret("gone", "gone-token-"+suffix, gen),
			{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": "np-0", "labels": gen},
				"spec": map[string]any{"type": "NodePort", "selector": map[string]any{"app": "np"},
					"ports": []any{map[string]any{"name": "http", "port": int64(80), "nodePort": int64(31990 + i)}}}},
		} {
			u := &unstructured.Unstructured{Object: obj}
			gvr := schema.GroupVersionResource{Version: "v1", Resource: strings.ToLower(u.GetKind()) + "s"}
			_, err := c.dyn.Resource(gvr).Namespace(ns).Create(ctx, u, metav1.CreateOptions{})
			require.NoError(t, err)
		}
	}
}

func tokenSecret(account, name string, labels map[string]any) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/service-account-token",
		"metadata": map[string]any{"name": name, "labels": labels,
			"annotations": map[string]any{"kubernetes.io/service-account.name": account, "kubernetes.io/service-account.uid": "u"}},
		"data": map[string]any{"token": "dG9rZW4=", "ca.crt": "Y2E="}}
}

// issue44Restores runs the restores issue 44's classes need: a namespace
// mapped onto one the restore also restores, a mapping onto an invalid
// namespace name, kept node ports in a mapped copy while the originals
// exist, every selector operator, and a selector Velero cannot convert.
func issue44Restores(restore func(string, velerov1.RestoreSpec)) {
	restore("gen-many-to-one", velerov1.RestoreSpec{IncludedNamespaces: []string{"gen-0", "gen-1"},
		NamespaceMapping: map[string]string{"gen-1": "gen-0"}, ExistingResourcePolicy: velerov1.PolicyTypeUpdate})
	restore("gen-bad-target", velerov1.RestoreSpec{IncludedNamespaces: []string{"gen-0", "gen-1"},
		NamespaceMapping: map[string]string{"gen-1": "Bad_NS"}})
	restore("gen-nodeports", velerov1.RestoreSpec{IncludedNamespaces: []string{"gen-1"},
		IncludedResources: []string{"services", "secrets", "serviceaccounts"}, NamespaceMapping: map[string]string{"gen-1": "gen-1-np"}})
	restore("gen-operators", velerov1.RestoreSpec{LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "b"}},
		{Key: "app", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"con-1"}},
		{Key: "tenantkit.io/gen", Operator: metav1.LabelSelectorOpExists},
		{Key: "edited", Operator: metav1.LabelSelectorOpDoesNotExist}}}})
	restore("gen-bad-operator", velerov1.RestoreSpec{LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: "tier", Operator: "Gt", Values: []string{"1"}}}}})
}

// tally counts agreement by the plan's decision. A "one of" item counts
// under "one-of"; items Velero lists that the plan lacks under
// "unplanned".
func (o *oracle) tally(plan *backup.RestorePlan, velero map[string]string, diff []backup.Disagreement) {
	if o.by == nil {
		o.by = map[string][2]int{}
	}
	bad := map[string]bool{}
	for _, d := range diff {
		bad[d.ID] = true
	}
	planned := map[string]bool{}
	for _, it := range plan.Items {
		planned[it.ID()] = true
		key := string(it.Action)
		if strings.HasPrefix(it.VeleroResult, "one of: ") {
			key = "one-of"
		}
		n := o.by[key]
		n[1]++
		if !bad[it.ID()] {
			n[0]++
		}
		o.by[key] = n
	}
	for id := range velero {
		if !planned[id] {
			n := o.by["unplanned"]
			n[1]++
			o.by["unplanned"] = n
		}
	}
}

func (o *oracle) byDecision() string {
	var out []string
	for k, n := range o.by {
		out = append(out, fmt.Sprintf("%s %d/%d", k, n[0], n[1]))
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}
