package backup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	velerov1 "github.com/vmware-tanzu/velero/pkg/apis/velero/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// CheckOptions says which restore CheckRestore checks.
type CheckOptions struct {
	// Backup is the backup the restore read (the Restore's
	// spec.backupName). Required.
	Backup string
	// Spec is the Restore's spec.
	Spec velerov1.RestoreSpec
	// Plan, when set, is the preview made before the restore; each item's
	// VeleroResult is compared with Velero's restored-resource list.
	Plan *RestorePlan
}

// CheckItem is an item a check found wrong.
type CheckItem struct {
	PlanItem
	// Velero is the item's result in Velero's restored-resource list (""
	// when not listed).
	Velero string `json:"velero,omitempty"`
	// Problem says what is wrong.
	Problem string `json:"problem"`
}

// Disagreement is an item whose planned result is not Velero's.
type Disagreement struct {
	// ID is "<apiVersion>/<Kind> [<namespace>/]<name>".
	ID string `json:"id"`
	// Planned and Velero are the results ("" for not listed).
	Planned string `json:"planned"`
	Velero  string `json:"velero"`
}

// RestoreCheck is what CheckRestore found.
type RestoreCheck struct {
	Restore string `json:"restore"`
	Backup  string `json:"backup"`
	// Missing are items the restore selects that are not in the cluster.
	Missing []CheckItem `json:"missing,omitempty"`
	// Skipped are items not in the cluster because Velero left them out
	// on purpose or failed on them as the plan predicted (a service
	// account's token secret its secret action skips, a kept node port
	// another Service holds, a target namespace it cannot create, a
	// restore that failed before any item); Problem gives the plan's
	// reason. They are not a failed check.
	Skipped []CheckItem `json:"skipped,omitempty"`
	// Different are items Velero created or updated whose cluster copy
	// does not hold the backed-up fields.
	Different []CheckItem `json:"different,omitempty"`
	// Replaced are items a controller of the cluster keeps up, which it
	// rewrote or replaced after the restore, as it does on any real
	// cluster: a Service's Endpoints (the endpoints controller) and its
	// controller-managed EndpointSlices (owned by the Service's old UID,
	// collected and made anew under another name). Missing or different,
	// they are not a failed restore.
	Replaced []CheckItem `json:"replaced,omitempty"`
	// Disagreements compare the plan with Velero's list (with a Plan).
	Disagreements []Disagreement `json:"disagreements,omitempty"`
	// Velero is Velero's restored-resource list: ID -> result.
	Velero map[string]string `json:"velero"`
	// Results are Velero's warnings and errors for the restore.
	Results Results `json:"results"`
	// Items is the number of backed-up items checked.
	Items int `json:"items"`
}

// OK reports whether nothing is missing or different and the plan, if
// given, agreed with Velero.
func (c *RestoreCheck) OK() bool {
	return len(c.Missing) == 0 && len(c.Different) == 0 && len(c.Disagreements) == 0
}

// CheckRestore checks a finished Velero restore: it reads the backup
// again (verifying it) and the cluster, and reports each item the restore
// selects that is missing, and each item Velero created or updated that
// no longer holds its backed-up fields (fields the cluster adds, such as
// defaults and allocated IPs, are not differences). Velero's own results
// and restored-resource list come from the bucket
// (restores/<name>/restore-<name>-{results,resource-list.json}.gz).
func (s *Store) CheckRestore(ctx context.Context, restore string, target RestoreTarget, opts CheckOptions) (*RestoreCheck, error) {
	if opts.Backup == "" {
		return nil, fmt.Errorf("%w: CheckRestore needs the backup's name", ErrInvalidConfig)
	}
	c := &RestoreCheck{Restore: restore, Backup: opts.Backup}
	var err error
	if c.Velero, err = s.RestoredResources(ctx, restore); err != nil {
		return nil, fmt.Errorf("check restore %s: %w", restore, err)
	}
	if c.Results, err = s.RestoreResults(ctx, restore); err != nil && !errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("check restore %s: %w", restore, err)
	}
	pl := &planner{target: target, spec: opts.Spec, keep: true}
	pl.seen = func(it *PlanItem, obj map[string]any) { c.checkItem(pl, it, obj) }
	plan, err := s.plan(ctx, opts.Backup, pl)
	if err != nil {
		return nil, fmt.Errorf("check restore %s: %w", restore, err)
	}
	// Items Velero failed on before deciding (a restore that failed before
	// any item, a target namespace it cannot create) are not missing.
	for _, it := range plan.Items {
		if it.Action == RestoreFail && it.VeleroResult == "" {
			c.Skipped = append(c.Skipped, CheckItem{PlanItem: it, Problem: "not restored, as planned: " + it.Reason})
		}
	}
	if opts.Plan != nil {
		c.Disagreements = CompareResults(opts.Plan.VeleroResults(), c.Velero)
	}
	return c, nil
}

// checkItem checks one selected item against the cluster and Velero.
func (c *RestoreCheck) checkItem(pl *planner, it *PlanItem, obj map[string]any) {
	c.Items++
	velero := c.Velero[it.ID()]
	lo, exists := pl.cv.live[liveKey(it.Resource, it.TargetNamespace, it.Name)]
	switch {
	case controllerKept(pl, it, obj):
		if !exists || (lo.obj != nil && len(subsetDiff("", stripRestoreLabels(obj), stripRestoreLabels(lo.obj), nil)) > 0) {
			c.Replaced = append(c.Replaced, CheckItem{PlanItem: *it, Velero: velero, Problem: "rewritten or replaced by its controller"})
		}
	case !exists && (it.Action == RestoreFail || it.Action == RestoreNever):
		c.Skipped = append(c.Skipped, CheckItem{PlanItem: *it, Velero: velero, Problem: "not restored, as planned: " + it.Reason})
	case !exists:
		c.Missing = append(c.Missing, CheckItem{PlanItem: *it, Velero: velero, Problem: "not in the cluster"})
	case pl.collided[it.ID()] || it.Action == RestoreFail:
		// Another backed-up item may have won the target, or Velero failed
		// on it as planned: what the cluster holds is not this item's.
	case it.Resource == "serviceaccounts" && velero == "updated":
		// Velero merged it: the backup's labels, annotations and secrets
		// must be there, the rest is the cluster's.
		if saMergeAdds(obj, lo.obj) {
			c.Different = append(c.Different, CheckItem{PlanItem: *it, Velero: velero, Problem: "lacks labels, annotations or secrets of the backup's"})
		}
	case (velero == "created" || velero == "updated") && !it.Approximate:
		if diff := subsetDiff("", stripRestoreLabels(obj), stripRestoreLabels(lo.obj), nil); len(diff) > 0 {
			ci := CheckItem{PlanItem: *it, Velero: velero, Problem: "differs from the backup"}
			ci.Diff = diff
			c.Different = append(c.Different, ci)
		}
	}
}

// controllerKept reports whether the cluster's own controllers keep the
// item up: an EndpointSlice the EndpointSlice (or mirroring) controller
// manages, or the Endpoints of a Service with a selector in the cluster.
func controllerKept(pl *planner, it *PlanItem, obj map[string]any) bool {
	switch it.Resource {
	case "endpointslices.discovery.k8s.io":
		by, _, _ := unstructured.NestedString(obj, "metadata", "labels", "endpointslice.kubernetes.io/managed-by")
		return by == "endpointslice-controller.k8s.io" || by == "endpointslicemirroring-controller.k8s.io"
	case "endpoints":
		svc := pl.cv.live[liveKey("services", it.TargetNamespace, it.Name)]
		sel, _, _ := unstructured.NestedStringMap(svc.obj, "spec", "selector")
		return len(sel) > 0
	}
	return false
}

func stripRestoreLabels(obj map[string]any) map[string]any {
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		if k != "status" { // stripped from the cluster's copy too
			out[k] = v
		}
	}
	if md, ok := obj["metadata"].(map[string]any); ok {
		m := make(map[string]any, len(md))
		for k, v := range md {
			if k != "managedFields" {
				m[k] = v
			}
		}
		if l, ok := md["labels"].(map[string]any); ok {
			nl := map[string]any{}
			for k, v := range l {
				if k != labelBackupName && k != labelRestoreName {
					nl[k] = v
				}
			}
			m["labels"] = nl
		}
		out["metadata"] = m
	}
	return out
}

// subsetDiff returns the paths where want holds something got does not:
// maps are compared key by key (got may hold more), anything else must
// be equal.
func subsetDiff(prefix string, want, got any, out []string) []string {
	wm, ok := want.(map[string]any)
	gm, ok2 := got.(map[string]any)
	if ok && ok2 {
		for _, k := range sortedAnyKeys(wm) {
			p := strings.TrimPrefix(prefix+"."+k, ".")
			gv, in := gm[k]
			if !in {
				if !emptyValue(wm[k]) && len(out) < maxDiffPaths {
					out = append(out, p+" (missing)")
				}
				continue
			}
			out = subsetDiff(p, wm[k], gv, out)
		}
		return out
	}
	wl, ok := want.([]any)
	gl, ok2 := got.([]any)
	if ok && ok2 && len(wl) == len(gl) {
		for i := range wl {
			out = subsetDiff(fmt.Sprintf("%s[%d]", prefix, i), wl[i], gl[i], out)
		}
		return out
	}
	if !emptyValue(want) || !emptyValue(got) {
		if fmt.Sprint(want) != fmt.Sprint(got) && len(out) < maxDiffPaths {
			out = append(out, orRoot(prefix))
		}
	}
	return out
}

func emptyValue(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case map[string]any:
		for _, v := range x {
			if !emptyValue(v) {
				return false
			}
		}
		return true
	case []any:
		return len(x) == 0
	case string:
		return x == ""
	}
	return false
}

func sortedAnyKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// CompareResults compares planned results with Velero's, both ID ->
// result, and returns the items that disagree, sorted by ID. A planned
// "one of: a, b" (Velero's own order decides) agrees with a and with b.
func CompareResults(planned, velero map[string]string) []Disagreement {
	var out []Disagreement
	for id, p := range planned {
		v := velero[id]
		if rest, ok := strings.CutPrefix(p, oneOfPrefix); ok && slices.Contains(strings.Split(rest, ", "), v) {
			continue
		}
		if v != p {
			out = append(out, Disagreement{ID: id, Planned: p, Velero: v})
		}
	}
	for id, v := range velero {
		if _, ok := planned[id]; !ok {
			out = append(out, Disagreement{ID: id, Velero: v})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// RestoredResources reads Velero's restored-resource list of restore name
// (restores/<name>/restore-<name>-resource-list.json.gz); see
// DecodeRestoredResources.
func (s *Store) RestoredResources(ctx context.Context, name string) (map[string]string, error) {
	file := "restore-" + name + "-resource-list.json.gz"
	rc, err := s.openGzip(ctx, s.key("restores", name, file))
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	out, err := DecodeRestoredResources(io.LimitReader(rc, maxJSONSize))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return out, nil
}

// DecodeRestoredResources decodes a (decompressed) restored-resource list,
// a map from "<apiVersion>/<Kind>" to "[<namespace>/]<name>(<result>)"
// entries (Velero's pkg/restore/request.go:90-112), into ID -> result:
// "<apiVersion>/<Kind> [<namespace>/]<name>" -> created, updated, skipped
// or failed.
func DecodeRestoredResources(r io.Reader) (map[string]string, error) {
	const file = "restored-resource list"
	var raw map[string][]string
	dec := json.NewDecoder(r)
	if err := dec.Decode(&raw); err != nil {
		return nil, &DecodeError{File: file, Err: err}
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &DecodeError{File: file, Err: errors.New("trailing data after the object")}
	}
	out := map[string]string{}
	for gvk, entries := range raw {
		if !validGVK(gvk) {
			return nil, &DecodeError{File: file, Err: fmt.Errorf("key %q is not <group>/<version>/<Kind>", gvk)}
		}
		for _, e := range entries {
			open := strings.LastIndex(e, "(")
			if open < 0 || !strings.HasSuffix(e, ")") || !validItem(e[:open]) {
				return nil, &DecodeError{File: file, Err: fmt.Errorf("%s: entry %q is not <item>(<result>)", gvk, e)}
			}
			switch res := e[open+1 : len(e)-1]; res {
			case "created", "updated", "skipped", "failed":
				out[gvk+" "+e[:open]] = res
			default:
				return nil, &DecodeError{File: file, Err: fmt.Errorf("%s: entry %q has an unknown result", gvk, e)}
			}
		}
	}
	return out, nil
}
