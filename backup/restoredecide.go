package backup

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"sync"

	velerov1 "github.com/vmware-tanzu/velero/pkg/apis/velero/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// decide plans a selected item against the cluster's copy, as restoreItem
// does (restore.go:1820-1960): create it when missing; otherwise compare
// the two after stripping metadata and status and setting the restore
// labels, and skip the identical, warn about (none) or patch (update) the
// different.
func (pl *planner) decide(it *PlanItem, u *unstructured.Unstructured) {
	gr := it.Resource
	if why, ok := approximateActions[gr]; ok {
		it.Approximate, it.Reason = true, "approximate: "+why
	}
	if u != nil {
		it.RestoreStatus = pl.f.restoresStatus(gr, u.GetAnnotations())
	} else {
		it.RestoreStatus = pl.f.status != nil && pl.f.status.include(gr)
	}
	lo, exists := pl.cv.live[liveKey(gr, it.TargetNamespace, it.Name)]
	var obj map[string]any
	if u != nil {
		var err error
		if obj, err = pl.normalizeBackup(gr, it.TargetNamespace, u); err != nil {
			// A restore item action failing is an error for the item, which
			// Velero lists failed (restore.go:1638-1641, :1485-1500).
			it.Action, it.VeleroResult = RestoreFail, "failed"
			it.Reason = "Velero's restore item action fails on it: " + err.Error()
			return
		}
	}
	if pl.seen != nil {
		pl.pending = append(pl.pending, pendingCheck{idx: len(pl.items), obj: obj})
	}
	if gr == "secrets" && obj["type"] == string(corev1.SecretTypeServiceAccountToken) {
		pl.tokens = append(pl.tokens, len(pl.items)) // settled once every service account is known
	}
	if !exists {
		it.Action, it.VeleroResult = RestoreCreate, "created"
		if gr == "services" {
			pl.nodePortTaken(it, obj)
		}
		return
	}
	h, err := objectHash(pl.cv.seed, obj)
	if err == nil && h == lo.hash {
		it.Action, it.VeleroResult = RestoreExistsIdentical, "skipped"
		return
	}
	switch {
	case gr == "serviceaccounts" && !saMergeAdds(obj, lo.obj):
		it.Action, it.VeleroResult = RestoreExistsKept, "skipped"
		it.Reason = "service account: the cluster's has every label, annotation and secret of the backup's, so Velero's merge changes nothing"
		return
	case gr == "serviceaccounts":
		it.Action, it.VeleroResult = RestoreUpdate, "updated"
		it.Reason = "service account: Velero merges the backup's labels, annotations and secrets into the cluster's (restore.go:1880-1913)"
	case pl.spec.ExistingResourcePolicy == velerov1.PolicyTypeUpdate:
		it.Action, it.VeleroResult = RestoreUpdate, "updated"
		if why := pl.updateRefused(gr, it, obj, lo.obj); why != "" {
			it.Action, it.VeleroResult, it.Reason = RestoreFail, "failed", why
		} else if gr == "services" {
			pl.nodePortTaken(it, obj) // the patch moves the Service onto the backup's node ports
		}
	default:
		it.Action, it.VeleroResult = RestoreExistsDifferent, "failed"
		if it.Reason == "" {
			it.Reason = "exists and differs: Velero skips it with a warning"
		}
	}
	if len(pl.diffs) < maxDiffs {
		pl.diffs[len(pl.items)] = obj
	}
}

// saMergeAdds reports whether Velero's service account merge adds
// anything to the cluster's copy: labels, annotations, secrets or image
// pull secrets it lacks (pkg/restore/merge_service_account.go:32-60). When
// it adds nothing the patch is empty and the item is skipped.
func saMergeAdds(backup, live map[string]any) bool {
	for _, f := range [][]string{{"metadata", "labels"}, {"metadata", "annotations"}} {
		b, _, _ := unstructured.NestedStringMap(backup, f...)
		l, _, _ := unstructured.NestedStringMap(live, f...)
		for k := range b {
			if _, ok := l[k]; !ok {
				return true
			}
		}
	}
	for _, f := range []string{"secrets", "imagePullSecrets"} {
		have := map[string]bool{}
		l, _, _ := unstructured.NestedSlice(live, f)
		for _, e := range l {
			if m, ok := e.(map[string]any); ok {
				have[fmt.Sprint(m["name"])] = true
			}
		}
		b, _, _ := unstructured.NestedSlice(backup, f)
		for _, e := range b {
			if m, ok := e.(map[string]any); ok && !have[fmt.Sprint(m["name"])] {
				return true
			}
		}
	}
	return false
}

// normalizeBackup turns a backed-up item into what Velero compares with
// the cluster's copy: metadata and status stripped (restore.go:1591), the
// restore item action's model applied, the target namespace and the
// restore labels set (restore.go:1783-1795).
func (pl *planner) normalizeBackup(gr, target string, u *unstructured.Unstructured) (map[string]any, error) {
	obj := u.Object
	resetMetadataAndStatus(obj)
	obj, err := applyRestoreAction(gr, obj, pl.spec.NamespaceMapping, pl.spec.PreserveNodePorts != nil && *pl.spec.PreserveNodePorts)
	if err != nil {
		return nil, err
	}
	out := &unstructured.Unstructured{Object: obj}
	if target != "" {
		out.SetNamespace(target)
	}
	addRestoreLabels(out)
	return out.Object, nil
}

// nameDiffs reads the cluster's copy of up to maxDiffs differing items,
// a few at a time, and names the fields that differ.
func (pl *planner) nameDiffs(ctx context.Context) error {
	idx := make(chan int)
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range idx {
				it := &pl.items[i]
				if lo := pl.cv.live[liveKey(it.Resource, it.TargetNamespace, it.Name)]; lo.obj != nil {
					it.Diff = diffPaths("", pl.diffs[i], lo.obj, nil)
					continue
				}
				live, err := pl.cv.get(ctx, it.Resource, it.TargetNamespace, it.Name)
				if err != nil {
					select {
					case errs <- err:
					default:
					}
					continue
				}
				if live != nil {
					it.Diff = diffPaths("", pl.diffs[i], live, nil)
				}
			}
		}()
	}
	for i := range pl.diffs {
		idx <- i
	}
	close(idx)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}

// maxDiffPaths bounds the paths named per item.
const maxDiffPaths = 10

// diffPaths returns the dotted paths where a and b differ, descending
// into maps.
func diffPaths(prefix string, a, b any, out []string) []string {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if !aok || !bok {
		if !reflect.DeepEqual(a, b) && len(out) < maxDiffPaths {
			out = append(out, orRoot(prefix))
		}
		return out
	}
	keys := map[string]bool{}
	for k := range am {
		keys[k] = true
	}
	for k := range bm {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		p := k
		if prefix != "" {
			p = prefix + "." + k
		}
		av, ain := am[k]
		bv, bin := bm[k]
		switch {
		case ain != bin:
			if len(out) < maxDiffPaths {
				out = append(out, fmt.Sprintf("%s (%s)", p, presence(ain)))
			}
		default:
			out = diffPaths(p, av, bv, out)
		}
	}
	return out
}

func presence(inBackup bool) string {
	if inBackup {
		return "only in the backup"
	}
	return "only in the cluster"
}

func orRoot(p string) string {
	if p == "" {
		return "(object)"
	}
	return p
}
