package backup

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// oneOfPrefix starts the VeleroResult of an item whose result Velero's own
// order decides.
const oneOfPrefix = "one of: "

// readExtras reads what decisions about other objects need: the node
// ports every Service of the cluster holds (when services restore), and
// the service accounts of each namespace whose secrets restore (Velero's
// secret action lists them).
func (pl *planner) readExtras(ctx context.Context) error {
	cv, f := pl.cv, pl.f
	cv.nodePorts, cv.accounts = map[int64]string{}, map[string]map[string]bool{}
	if m, ok := cv.mapping("v1/Service"); ok && f.resources.include("services") {
		err := cv.list(ctx, m.Resource, "", func(u *unstructured.Unstructured) {
			for _, p := range servicePorts(u.Object) {
				cv.nodePorts[p] = u.GetNamespace() + "/" + u.GetName()
			}
		})
		if err != nil {
			return err
		}
	}
	m, ok := cv.mapping("v1/ServiceAccount")
	if !ok || !f.resources.include("secrets") {
		return nil
	}
	for ns := range pl.listed["v1/Secret"] {
		if ns == "" || !f.namespaces.include(ns) || !cv.namespaces[ns] {
			continue
		}
		names := map[string]bool{}
		if err := cv.list(ctx, m.Resource, ns, func(u *unstructured.Unstructured) { names[u.GetName()] = true }); err != nil {
			return err
		}
		cv.accounts[ns] = names
	}
	return nil
}

// servicePorts returns a Service's node ports and health check node port.
func servicePorts(obj map[string]any) []int64 {
	var out []int64
	ports, _, _ := unstructured.NestedSlice(obj, "spec", "ports")
	for _, e := range ports {
		if p, ok := e.(map[string]any); ok {
			if n, _, _ := unstructured.NestedInt64(p, "nodePort"); n > 0 {
				out = append(out, n)
			}
		}
	}
	if n, _, _ := unstructured.NestedInt64(obj, "spec", "healthCheckNodePort"); n > 0 {
		out = append(out, n)
	}
	return out
}

// nodePortTaken fails the create, or the update (existingResourcePolicy
// update patches the backup's ports in), of a Service whose node port Velero
// keeps (serviceAction) while another Service of the cluster holds it:
// the apiserver refuses it ("provided port is already allocated") and
// Velero reports an error for the item (restore.go:1976-1980).
func (pl *planner) nodePortTaken(it *PlanItem, obj map[string]any) {
	self := it.TargetNamespace + "/" + it.Name
	for _, p := range servicePorts(obj) {
		if owner, ok := pl.cv.nodePorts[p]; ok && owner != self {
			it.Action, it.VeleroResult = RestoreFail, "failed"
			it.Reason = fmt.Sprintf("Velero keeps node port %d (pkg/restore/actions/service_action.go:148-256), "+
				"and Service %s holds it: the create fails \"provided port is already allocated\"", p, owner)
			return
		}
	}
}

// updateRefused says why the apiserver refuses Velero's patch of a pod
// or job to the backed-up version (existingResourcePolicy update), or "".
// The patch is a JSON merge patch from the cluster's copy to the backed-up
// one (restore.go:2928-2950), so the result is the backed-up spec; the
// apiserver allows a pod to change only its images, activeDeadlineSeconds,
// tolerations and terminationGracePeriodSeconds (priority it keeps, the
// Priority admission plugin), and a job only its parallelism,
// activeDeadlineSeconds, suspend, ttlSecondsAfterFinished, backoffLimit
// and maxFailedIndexes (the selector and template are immutable). A
// refused patch is a warning: Velero lists the item failed.
func (pl *planner) updateRefused(gr string, it *PlanItem, backup, live map[string]any) string {
	if why := immutableDataRefused(gr, backup, live); why != "" {
		return why
	}
	var mutable []string
	switch gr {
	case "pods":
		mutable = []string{"priority", "activeDeadlineSeconds", "tolerations", "terminationGracePeriodSeconds"}
	case "jobs.batch":
		mutable = []string{"parallelism", "activeDeadlineSeconds", "suspend", "ttlSecondsAfterFinished", "backoffLimit", "maxFailedIndexes"}
	default:
		return ""
	}
	if live == nil {
		return ""
	}
	want, _, _ := unstructured.NestedMap(backup, "spec")
	have, _, _ := unstructured.NestedMap(live, "spec")
	for _, k := range mutable {
		if v, ok := have[k]; ok {
			want[k] = v
		} else {
			delete(want, k)
		}
	}
	if gr == "pods" {
		for _, f := range []string{"containers", "initContainers"} {
			w, _ := want[f].([]any)
			h, _ := have[f].([]any)
			for i := range w {
				if i < len(h) {
					wc, _ := w[i].(map[string]any)
					hc, _ := h[i].(map[string]any)
					if wc != nil && hc != nil {
						wc["image"] = hc["image"]
					}
				}
			}
		}
	}
	a, _ := json.Marshal(want)
	b, _ := json.Marshal(have)
	if string(a) == string(b) {
		return ""
	}
	paths := diffPaths("spec", want, have, nil)
	return fmt.Sprintf("the apiserver refuses Velero's patch of %s (%s): the spec may not change there", strings.Join(paths, ", "), it.Kind)
}

// settle decides what needs every item: service-account token secrets,
// and targets that more than one backed-up item restores onto. Then
// CheckRestore's checks run.
func (pl *planner) settle() {
	pl.settleTokens()
	pl.settleCollisions()
	for _, c := range pl.pending {
		pl.seen(&pl.items[c.idx], c.obj)
	}
}

// settleTokens skips a service-account token secret named
// "<account>-token-..." while a service account <account> exists in the
// secret's namespace in the backup (Velero's secret action lists them
// there, before the item moves to its target namespace:
// pkg/restore/actions/secret_action.go:74-89, restore.go:1786-1789). The
// accounts that exist then are the cluster's and those this restore put
// into that namespace before (service accounts restore before secrets).
func (pl *planner) settleTokens() {
	if len(pl.tokens) == 0 {
		return
	}
	accounts := map[string]map[string]bool{}
	for ns, names := range pl.cv.accounts {
		accounts[ns] = maps.Clone(names)
	}
	for _, it := range pl.items {
		if it.Resource != "serviceaccounts" || it.TargetNamespace != it.Namespace {
			continue
		}
		switch it.Action {
		case RestoreExcluded, RestoreNever, RestoreFail:
			continue
		}
		if accounts[it.Namespace] == nil {
			accounts[it.Namespace] = map[string]bool{}
		}
		accounts[it.Namespace][it.Name] = true
	}
	for _, i := range pl.tokens {
		it := &pl.items[i]
		for sa := range accounts[it.Namespace] {
			if strings.HasPrefix(it.Name, sa+"-token-") {
				it.Action, it.VeleroResult, it.Diff = RestoreNever, "skipped", nil
				it.Reason = "the token secret of service account " + sa + ", which exists in " + it.Namespace +
					": Velero's secret action skips it (pkg/restore/actions/secret_action.go:74-89)"
				delete(pl.diffs, i)
				break
			}
		}
	}
}

// settleCollisions marks the items of a target that more than one
// backed-up item restores onto (a namespace mapped onto another the
// restore also restores). Velero restores only the first it meets
// (restore.go:1474-1483 skips an item key already restored), and meets
// namespaces in Go map order (restore.go:995), so each item's own
// result is one of the results Velero may list for the target.
func (pl *planner) settleCollisions() {
	if len(pl.spec.NamespaceMapping) == 0 {
		return
	}
	byID := map[string][]int{}
	for i, it := range pl.items {
		if it.VeleroResult == "" || it.Resource == "namespaces" {
			continue
		}
		byID[it.ID()] = append(byID[it.ID()], i)
	}
	for _, idx := range byID {
		if len(idx) < 2 {
			continue
		}
		var results, from []string
		for _, i := range idx {
			it := pl.items[i]
			if !slices.Contains(results, it.VeleroResult) {
				results = append(results, it.VeleroResult)
			}
			from = append(from, it.Namespace)
		}
		sort.Strings(results)
		sort.Strings(from)
		result := results[0]
		if len(results) > 1 {
			result = oneOfPrefix + strings.Join(results, ", ")
		}
		if pl.collided == nil {
			pl.collided = map[string]bool{}
		}
		for _, i := range idx {
			it := &pl.items[i]
			pl.collided[it.ID()] = true
			it.VeleroResult = result
			it.Reason = strings.TrimPrefix(it.Reason+"; "+fmt.Sprintf("namespaces %s all restore onto %s: Velero restores whichever "+
				"it meets first, in Go map order (restore.go:995, :1474-1483), so the result and the data are one of theirs",
				strings.Join(from, ", "), it.TargetNamespace), "; ")
		}
	}
}

// immutableDataRefused says why the apiserver refuses Velero's patch of a
// Secret or ConfigMap to the backed-up version, or "": a Secret's type
// never changes (ValidateSecretUpdate: "field is immutable", seen from
// Velero as a restore warning on a same-name Secret of another type), and
// one marked immutable keeps its data, binaryData and the mark
// (ValidateSecretUpdate, ValidateConfigMapUpdate).
func immutableDataRefused(gr string, backup, live map[string]any) string {
	if live == nil || (gr != "secrets" && gr != "configmaps") {
		return ""
	}
	if gr == "secrets" {
		bt, _, _ := unstructured.NestedString(backup, "type")
		lt, _, _ := unstructured.NestedString(live, "type")
		if orOpaque(bt) != orOpaque(lt) {
			return fmt.Sprintf("the apiserver refuses Velero's patch of the Secret's type (%s to %s): the field is immutable", orOpaque(lt), orOpaque(bt))
		}
	}
	if imm, _, _ := unstructured.NestedBool(live, "immutable"); !imm {
		return ""
	}
	bImm, _, _ := unstructured.NestedBool(backup, "immutable")
	a, _ := json.Marshal([]any{backup["data"], backup["binaryData"]})
	b, _ := json.Marshal([]any{live["data"], live["binaryData"]})
	if !bImm || string(a) != string(b) {
		return "the apiserver refuses Velero's patch: the cluster's copy is marked immutable and the backed-up one differs in its data or the mark"
	}
	return ""
}

func orOpaque(t string) string {
	if t == "" {
		return "Opaque"
	}
	return t
}
