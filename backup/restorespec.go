package backup

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	velerov1 "github.com/vmware-tanzu/velero/pkg/apis/velero/v1"
	"k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Velero v1.18.3 is the model; file:line references below are to its
// source (github.com/vmware-tanzu/velero@v1.18.3).

// nonRestorable are the resources Velero never restores: it appends them
// to every Restore's excluded resources and refuses a Restore that
// includes one (pkg/controller/restore_controller.go:68-95, :308-321).
var nonRestorable = []string{
	"nodes", "events", "events.events.k8s.io", "backups.velero.io", "restores.velero.io",
	"resticrepositories.velero.io", "csinodes.storage.k8s.io", "volumeattachments.storage.k8s.io",
	"backuprepositories.velero.io",
}

// restorePriorities are the server's default resource priorities for
// restores (pkg/cmd/server/config/config.go:112-149): the high ones first,
// in order, then the backup's other resources alphabetically, then the low
// ones (pkg/restore/restore.go:688-714).
var restorePriorities = struct{ high, low []string }{
	high: []string{"customresourcedefinitions", "namespaces", "storageclasses",
		"volumesnapshotclass.snapshot.storage.k8s.io", "volumesnapshotcontents.snapshot.storage.k8s.io",
		"volumesnapshots.snapshot.storage.k8s.io", "datauploads.velero.io", "persistentvolumes",
		"persistentvolumeclaims", "clusterroles", "roles", "serviceaccounts", "clusterrolebindings",
		"rolebindings", "secrets", "configmaps", "limitranges", "priorityclasses", "pods",
		"replicasets.apps", "clusterclasses.cluster.x-k8s.io", "endpoints", "services"},
	low: []string{"clusterbootstraps.run.tanzu.vmware.com", "clusters.cluster.x-k8s.io",
		"clusterresourcesets.addons.cluster.x-k8s.io", "apps.kappctrl.k14s.io", "packageinstalls.packaging.carvel.dev"},
}

// includesExcludes is Velero's IncludesExcludes
// (pkg/util/collections/includes_excludes.go:243-268): excludes win, no
// includes or "*" includes everything; entries are globs.
type includesExcludes struct{ includes, excludes []string }

func globMatch(list []string, s string) bool {
	for _, g := range list {
		if ok, err := path.Match(g, s); err == nil && ok {
			return true
		}
	}
	return false
}

func (ie includesExcludes) include(s string) bool {
	if globMatch(ie.excludes, s) {
		return false
	}
	return len(ie.includes) == 0 || slices.Contains(ie.includes, "*") || globMatch(ie.includes, s)
}

// everything is IncludeEverything: no excludes, and no includes or "*".
func (ie includesExcludes) everything() bool {
	return len(ie.excludes) == 0 && (len(ie.includes) == 0 || (len(ie.includes) == 1 && ie.includes[0] == "*"))
}

// restoreFilter is a RestoreSpec resolved against the cluster's API
// discovery, as RestoreWithResolvers does (pkg/restore/restore.go:188-240).
type restoreFilter struct {
	spec       velerov1.RestoreSpec
	resources  includesExcludes // group-resource strings
	namespaces includesExcludes
	status     *includesExcludes // nil: no status is restored
	selector   labels.Selector
	or         []labels.Selector
	never      map[string]bool
	// failure, when set, is why Velero's restore fails before it restores
	// any item: a label selector it cannot convert (restore.go:202-216).
	failure string
	// badTargets are the mapping targets that are not valid namespace
	// names, each with the apiserver's reason.
	badTargets map[string]string
}

// newRestoreFilter resolves spec; resolve maps a resource name as a user
// writes it ("cm", "deployments") to a group-resource ("deployments.apps"),
// returning it unchanged when discovery does not know it
// (pkg/util/collections/includes_excludes.go:273-292).
func newRestoreFilter(spec velerov1.RestoreSpec, resolve func(string) string) (*restoreFilter, error) {
	f := &restoreFilter{spec: spec, never: map[string]bool{}}
	for _, r := range nonRestorable {
		f.never[r] = true
	}
	mapAll := func(in []string) []string {
		var out []string
		for _, s := range in {
			if s == "*" {
				out = append(out, s)
				continue
			}
			out = append(out, resolve(s))
		}
		return out
	}
	f.resources = includesExcludes{includes: mapAll(spec.IncludedResources), excludes: mapAll(spec.ExcludedResources)}
	f.namespaces = includesExcludes{includes: spec.IncludedNamespaces, excludes: spec.ExcludedNamespaces}
	if rs := spec.RestoreStatus; rs != nil {
		f.status = &includesExcludes{includes: mapAll(rs.IncludedResources), excludes: mapAll(rs.ExcludedResources)}
	}
	// A nil selector selects everything (restore.go:193-200). Velero does
	// not validate selectors: one it cannot convert (an unknown operator,
	// In without values, Exists with values) fails the restore before any
	// item, as an error in its results; the Restore ends PartiallyFailed
	// (restore.go:202-216). The OR selectors are converted first.
	f.selector, f.or = labels.Everything(), nil
	for i, o := range spec.OrLabelSelectors {
		s, err := metav1.LabelSelectorAsSelector(o)
		if err != nil && f.failure == "" {
			f.failure = fmt.Sprintf("orLabelSelectors[%d]: %v", i, err)
		}
		f.or = append(f.or, s)
	}
	ls := spec.LabelSelector
	if ls == nil {
		ls = &metav1.LabelSelector{}
	}
	if sel, err := metav1.LabelSelectorAsSelector(ls); err != nil && f.failure == "" {
		f.failure = "labelSelector: " + err.Error()
	} else if err == nil {
		f.selector = sel
	}
	f.badTargets = map[string]string{}
	for _, t := range spec.NamespaceMapping {
		if msgs := validation.ValidateNamespaceName(t, false); len(msgs) > 0 {
			f.badTargets[t] = strings.Join(msgs, "; ")
		}
	}
	for _, r := range spec.IncludedResources {
		if f.never[resolve(r)] || f.never[r] {
			return nil, &RestoreSpecError{Field: "includedResources", Err: errNonRestorable(r)}
		}
	}
	if err := validateRestoreSpec(spec); err != nil {
		return nil, err
	}
	switch spec.ExistingResourcePolicy {
	case "", velerov1.PolicyTypeNone, velerov1.PolicyTypeUpdate:
	default:
		return nil, &RestoreSpecError{Field: "existingResourcePolicy", Err: errPolicy(spec.ExistingResourcePolicy)}
	}
	return f, nil
}

// target returns the namespace an item of namespace ns restores into.
func (f *restoreFilter) target(ns string) string {
	if t, ok := f.spec.NamespaceMapping[ns]; ok {
		return t
	}
	return ns
}

// scope decides on a resource and namespace before the item is read
// (restore.go:2562-2604); "" means selected.
func (f *restoreFilter) scope(gr, ns string) (RestoreAction, string) {
	switch {
	case f.never[gr]:
		return RestoreNever, "Velero never restores " + gr + " (restore_controller.go:68)"
	case !f.resources.include(gr):
		return RestoreExcluded, "resource " + gr + " is excluded by the spec"
	case ns != "" && !f.namespaces.include(ns):
		return RestoreExcluded, "namespace " + ns + " is excluded by the spec"
	case ns == "" && f.spec.IncludeClusterResources != nil && !*f.spec.IncludeClusterResources:
		return RestoreExcluded, "cluster-scoped, and includeClusterResources is false"
	case ns == "" && f.spec.IncludeClusterResources == nil && !f.namespaces.everything():
		return RestoreExcluded, "cluster-scoped, and only some namespaces are included"
	}
	return "", ""
}

// selects applies the label selector and the OR selectors
// (restore.go:2792-2818).
func (f *restoreFilter) selects(l map[string]string) bool {
	set := labels.Set(l)
	if !f.selector.Matches(set) {
		return false
	}
	if len(f.or) == 0 {
		return true
	}
	for _, s := range f.or {
		if s.Matches(set) {
			return true
		}
	}
	return false
}

// restoresStatus is determineRestoreStatus (restore.go:3050-3096).
func (f *restoreFilter) restoresStatus(gr string, annotations map[string]string) bool {
	should := f.status != nil && f.status.include(gr)
	switch strings.ToLower(strings.TrimSpace(annotations["velero.io/restore-status"])) {
	case "true":
		should = true
	case "false":
		should = false
	}
	return should
}

// resourceOrder returns the restore position of each group-resource in
// backed: the high priorities, the rest alphabetically, the low ones
// (restore.go:688-714, resolved through discovery as :2544-2555 does).
func resourceOrder(backed []string, resolve func(string) string) map[string]int {
	order := map[string]int{}
	add := func(gr string) {
		if _, ok := order[gr]; !ok {
			order[gr] = len(order)
		}
	}
	prio := map[string]bool{}
	for _, r := range restorePriorities.high {
		add(resolve(r))
		prio[r], prio[resolve(r)] = true, true
	}
	var rest []string
	for _, r := range backed {
		if !prio[r] {
			rest = append(rest, r)
		}
	}
	sort.Strings(rest)
	for _, r := range rest {
		add(r)
	}
	for _, r := range restorePriorities.low {
		add(resolve(r))
	}
	return order
}

// validateRestoreSpec refuses what Velero's restore controller fails
// validation on (pkg/controller/restore_controller.go:324-338;
// pkg/util/collections/includes_excludes.go:586-611).
func validateRestoreSpec(spec velerov1.RestoreSpec) error {
	lists := []struct {
		included, excluded string
		includes, excludes []string
	}{
		{"includedResources", "excludedResources", spec.IncludedResources, spec.ExcludedResources},
		{"includedNamespaces", "excludedNamespaces", spec.IncludedNamespaces, spec.ExcludedNamespaces},
	}
	for _, l := range lists {
		switch {
		case len(l.includes) > 1 && slices.Contains(l.includes, "*"):
			return &RestoreSpecError{Field: l.included, Err: errors.New("must be \"*\" alone, or names")}
		case slices.Contains(l.excludes, "*"):
			return &RestoreSpecError{Field: l.excluded, Err: errors.New("cannot hold \"*\"")}
		}
		for _, x := range l.excludes {
			if slices.Contains(l.includes, x) {
				return &RestoreSpecError{Field: l.excluded, Err: fmt.Errorf("%s is also in %s", x, l.included)}
			}
		}
	}
	if spec.LabelSelector != nil && spec.OrLabelSelectors != nil {
		return &RestoreSpecError{Field: "orLabelSelectors", Err: errors.New("labelSelector and orLabelSelectors cannot both be set")}
	}
	return nil
}
