package backup

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	velerov1 "github.com/vmware-tanzu/velero/pkg/apis/velero/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// PlanOptions says which restore to plan.
type PlanOptions struct {
	// Spec is the Restore's spec, as Velero's Restore has it: included and
	// excluded namespaces and resources, label selectors, namespace
	// mapping, existingResourcePolicy, restoreStatus,
	// includeClusterResources, preserveNodePorts. BackupName is ignored
	// (the backup is PlanRestore's argument).
	Spec velerov1.RestoreSpec
}

// maxDiffs bounds the items whose differing fields a plan names.
const maxDiffs = 100

// planner decides item by item while Verify reads the archive.
type planner struct {
	target RestoreTarget
	spec   velerov1.RestoreSpec
	v      *verification
	f      *restoreFilter
	cv     *clusterView
	keep   bool                       // CheckRestore: keep objects, call seen
	listed map[string]map[string]bool // resource list: gvk -> namespaces
	items  []PlanItem
	nsItem map[string]int // target namespace -> index of its namespace item
	diffs  map[int]map[string]any
	// seen, in CheckRestore, gets each selected item with its normalized
	// backed-up object (nil when not decoded), once the plan is settled.
	seen    func(it *PlanItem, obj map[string]any)
	pending []pendingCheck
	tokens  []int // items that are service-account token secrets
	// collided are the IDs two or more backed-up items restore onto.
	collided map[string]bool
	err      error
}

// pendingCheck is an item CheckRestore checks once the plan is settled:
// its index in items (before sorting) and its normalized object.
type pendingCheck struct {
	idx int
	obj map[string]any
}

// PlanRestore previews a Velero restore of backup name into the target
// cluster: for each item of the backup, whether Velero v1.18.3 would
// create it, find it identical, skip it as different (or update it under
// existingResourcePolicy update), or leave it out (the spec, Velero's
// built-in exclusions), in Velero's restore order.
//
// It reads the backup once, streaming, and verifies it in the same read:
// a backup that fails Verify is refused with Verify's *VerifyError
// (ErrCorrupt) and no plan. It only reads the cluster (discovery, lists,
// and at most 100 gets to name differences); a cluster that
// cannot be read is a *ClusterError (ErrClusterUnreadable). backup/doc.go
// says what a plan cannot know.
func (s *Store) PlanRestore(ctx context.Context, name string, target RestoreTarget, opts PlanOptions) (*RestorePlan, error) {
	pl := &planner{target: target, spec: opts.Spec}
	return s.plan(ctx, name, pl)
}

func (s *Store) plan(ctx context.Context, name string, pl *planner) (*RestorePlan, error) {
	// The spec's own mistakes first, before any read (resource names are
	// resolved against discovery later).
	if _, err := newRestoreFilter(pl.spec, func(r string) string { return r }); err != nil {
		return nil, err
	}
	files, err := s.files(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("plan restore of %s: %w", name, err)
	}
	pl.listed, pl.nsItem, pl.diffs = map[string]map[string]bool{}, map[string]int{}, map[int]map[string]any{}
	v := &verification{name: name, rep: &VerifyReport{Backup: name}, set: newItemSet(),
		open: func(ctx context.Context, file string) (io.ReadCloser, error) {
			return s.open(ctx, s.backupKey(name, file))
		},
		listed: pl.list, beforeArchive: pl.prepare, visit: pl.visit}
	pl.v = v
	rep, err := v.run(ctx, files, VerifyOptions{})
	if err != nil {
		return nil, fmt.Errorf("plan restore of %s: %w", name, err)
	}
	if pl.err != nil {
		return nil, fmt.Errorf("plan restore of %s: %w", name, pl.err)
	}
	if err := pl.finish(ctx); err != nil {
		return nil, fmt.Errorf("plan restore of %s: %w", name, err)
	}
	plan := &RestorePlan{Backup: name, ExistingResourcePolicy: string(pl.spec.ExistingResourcePolicy),
		Items: pl.items, Counts: map[RestoreAction]int{}, Verify: rep}
	for _, it := range plan.Items {
		plan.Counts[it.Action]++
	}
	return plan, nil
}

// list records the resource list's kinds and namespaces.
func (pl *planner) list(gvk, item string) {
	ns, _, found := strings.Cut(item, "/")
	if !found {
		ns = ""
	}
	if pl.listed[gvk] == nil {
		pl.listed[gvk] = map[string]bool{}
	}
	pl.listed[gvk][ns] = true
}

// prepare reads the cluster, once the backup's metadata and resource list
// have verified: discovery, the namespaces, and the objects that items
// could collide with.
func (pl *planner) prepare(ctx context.Context) error {
	if !pl.v.rep.OK() {
		pl.v.visit = nil // refused: Verify's problems are the answer
		return nil
	}
	cv, err := newClusterView(ctx, pl.target, pl.keep)
	if err != nil {
		return err
	}
	f, err := newRestoreFilter(pl.spec, cv.resolve)
	if err != nil {
		return err
	}
	pl.cv, pl.f = cv, f
	done := map[string]bool{}
	for gvk, nss := range pl.listed {
		m, ok := cv.mapping(gvk)
		if !ok || m.Resource.Resource == "namespaces" {
			continue
		}
		gr := m.Resource.GroupResource().String()
		cv.served[gr] = m.Resource
		if !f.resources.include(gr) || f.never[gr] {
			continue
		}
		for ns := range nss {
			target := ""
			if m.Scope.Name() == meta.RESTScopeNameNamespace {
				if !f.namespaces.include(ns) {
					continue
				}
				target = f.target(ns)
			}
			if k := gr + "\x00" + target; !done[k] {
				done[k] = true
				if err := cv.index(ctx, m, target); err != nil {
					return err
				}
			}
		}
	}
	return pl.readExtras(ctx)
}

// visit decides on one item as Velero's restore would.
func (pl *planner) visit(p itemPath, id *itemID, body []byte) {
	if pl.err != nil {
		return
	}
	it := PlanItem{Resource: p.resource, APIVersion: string(id.apiVersion), Kind: string(id.kind),
		Namespace: p.namespace, Name: p.name}
	if p.namespace != "" {
		it.TargetNamespace = pl.f.target(p.namespace)
	}
	if pl.f.failure != "" {
		it.Action, it.Reason = RestoreFail, "Velero's restore fails before any item: "+pl.f.failure+
			" (restore.go:202-216); the Restore ends PartiallyFailed"
		pl.items = append(pl.items, it)
		return
	}
	if a, why := pl.f.scope(p.resource, p.namespace); a != "" {
		it.Action, it.Reason = a, why
		pl.items = append(pl.items, it)
		return
	}
	var u *unstructured.Unstructured
	if pl.needDecode(p, &it, body) {
		u = &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(body); err != nil {
			// Velero reports an error for the item (restore.go:2748-2760).
			it.Action, it.Reason = RestoreNever, "does not decode: "+err.Error()
			pl.items = append(pl.items, it)
			return
		}
		if !pl.f.selects(u.GetLabels()) {
			it.Action, it.Reason = RestoreExcluded, "labels do not match the spec's selectors"
			pl.items = append(pl.items, it)
			return
		}
	}
	target := it.TargetNamespace
	if p.resource == "namespaces" {
		target = pl.f.target(p.name)
	}
	if why, bad := pl.f.badTargets[target]; bad && target != "" {
		// EnsureNamespaceExistsAndIsReady fails: an error in the results,
		// and the item is neither restored nor listed (restore.go:1010-1025).
		it.Action, it.Reason = RestoreFail, "Velero cannot create namespace "+target+": "+why+" (restore.go:1010-1025)"
		pl.items = append(pl.items, it)
		return
	}
	if p.resource == "namespaces" {
		pl.namespaceItem(it)
		return
	}
	if p.namespace != "" {
		pl.ensureNamespace(it.TargetNamespace)
	}
	if never(&it, u) {
		pl.items = append(pl.items, it)
		return
	}
	pl.decide(&it, u)
	pl.items = append(pl.items, it)
}

// needDecode says whether deciding on the item needs its whole JSON:
// label selectors, a colliding object, kinds with special rules, a
// status annotation, or CheckRestore.
func (pl *planner) needDecode(p itemPath, it *PlanItem, body []byte) bool {
	if pl.keep || !pl.f.selector.Empty() || len(pl.f.or) > 0 {
		return true
	}
	switch p.resource {
	case "pods", "jobs.batch":
		return true
	case "secrets":
		if bytes.Contains(body, []byte("kubernetes.io/service-account-token")) {
			return true
		}
	case "services":
		if len(pl.cv.nodePorts) > 0 && bytes.Contains(body, []byte("nodePort")) {
			return true
		}
	}
	if _, ok := pl.cv.live[liveKey(p.resource, it.TargetNamespace, p.name)]; ok {
		return true
	}
	return bytes.Contains(body, []byte("velero.io/restore-status"))
}

// never applies Velero's rules for items it does not restore although
// the spec selects them (restore.go:1466-1478, :1506-1510).
func never(it *PlanItem, u *unstructured.Unstructured) bool {
	if u == nil {
		return false
	}
	switch it.Resource {
	case "pods":
		phase, _, _ := unstructured.NestedString(u.Object, "status", "phase")
		if phase == "Succeeded" || phase == "Failed" {
			it.Action, it.Reason = RestoreNever, "a completed pod (restore.go:2468)"
			return true
		}
		if u.GetAnnotations()["kubernetes.io/config.mirror"] != "" {
			it.Action, it.Reason, it.VeleroResult = RestoreNever, "a mirror pod (restore.go:1506)", "skipped"
			return true
		}
	case "jobs.batch":
		if t, _, _ := unstructured.NestedString(u.Object, "status", "completionTime"); t != "" {
			it.Action, it.Reason = RestoreNever, "a completed job (restore.go:2468)"
			return true
		}
	}
	return false
}

// namespaceItem plans a backed-up namespace: Velero creates it when it is
// missing and otherwise uses it as it is (restore.go:995-1043).
func (pl *planner) namespaceItem(it PlanItem) {
	target := pl.f.target(it.Name)
	if target != it.Name {
		it.Reason = "namespace " + it.Name + " mapped to " + target
		it.Name = target
	}
	if pl.cv.namespaces[target] {
		it.Action = RestoreExistsKept
		it.Reason = strings.TrimPrefix(it.Reason+"; exists already: Velero uses it as it is", "; ")
		pl.items = append(pl.items, it)
		return
	}
	it.Action, it.VeleroResult = RestoreCreate, "created"
	if i, ok := pl.nsItem[target]; ok {
		pl.items[i] = it
		return
	}
	pl.nsItem[target] = len(pl.items)
	pl.items = append(pl.items, it)
}

// ensureNamespace plans the creation of a missing target namespace, which
// Velero creates before the first item it restores into it
// (restore.go:1444-1458), from the backed-up namespace or blank.
func (pl *planner) ensureNamespace(target string) {
	if _, ok := pl.nsItem[target]; ok || pl.cv.namespaces[target] {
		return
	}
	pl.nsItem[target] = len(pl.items)
	pl.items = append(pl.items, PlanItem{Resource: "namespaces", APIVersion: "v1", Kind: "Namespace", Name: target,
		Action: RestoreCreate, VeleroResult: "created", Reason: "created for the items restored into it"})
}

// finish settles what needs the whole backup (items of kinds the cluster
// does not serve yet), names the differences, and sorts the plan into
// Velero's restore order.
func (pl *planner) finish(ctx context.Context) error {
	if pl.cv == nil {
		return nil
	}
	crds := map[string]bool{}
	var backed []string
	seen := map[string]bool{}
	for _, it := range pl.items {
		if it.Resource == "customresourcedefinitions.apiextensions.k8s.io" && (it.Action == RestoreCreate || it.Action == RestoreUpdate) {
			crds[it.Name] = true
		}
		if !seen[it.Resource] {
			seen[it.Resource] = true
			backed = append(backed, it.Resource)
		}
	}
	for i := range pl.items {
		it := &pl.items[i]
		if _, ok := pl.cv.served[it.Resource]; ok || it.Action != RestoreCreate || it.Resource == "namespaces" || crds[it.Resource] {
			continue
		}
		// restore.go:1815-1820: no client for the resource is a warning.
		it.Reason, it.VeleroResult = "the cluster does not serve "+it.Resource+" and the restore adds no CRD for it: Velero reports it failed", "failed"
	}
	pl.settle()
	if err := pl.nameDiffs(ctx); err != nil {
		return err
	}
	order := resourceOrder(backed, pl.cv.resolve)
	sort.SliceStable(pl.items, func(a, b int) bool {
		x, y := &pl.items[a], &pl.items[b]
		if order[x.Resource] != order[y.Resource] {
			return order[x.Resource] < order[y.Resource]
		}
		if x.TargetNamespace != y.TargetNamespace {
			return x.TargetNamespace < y.TargetNamespace
		}
		return x.Name < y.Name
	})
	return nil
}
