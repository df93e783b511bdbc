package backup

import (
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"
)

// RestoreAction is what a restore does, or will do, with one backed-up
// item.
type RestoreAction string

// The actions of a plan.
const (
	// RestoreCreate: not in the cluster; Velero creates it ("created").
	RestoreCreate RestoreAction = "create"
	// RestoreExistsIdentical: in the cluster and equal to the backed-up
	// item as Velero compares them; left alone ("skipped").
	RestoreExistsIdentical RestoreAction = "exists-identical"
	// RestoreExistsDifferent: in the cluster and different; under
	// existingResourcePolicy none Velero leaves it and warns ("failed" in
	// its restored-resource list, a warning in its results).
	RestoreExistsDifferent RestoreAction = "exists-different"
	// RestoreUpdate: in the cluster and different, and Velero patches it
	// to the backed-up version (existingResourcePolicy update, and
	// service accounts always) ("updated").
	RestoreUpdate RestoreAction = "update"
	// RestoreExistsKept: a namespace that exists already, which Velero
	// uses as it is without comparing (not listed by Velero); or a
	// service account to which Velero's merge adds nothing ("skipped").
	RestoreExistsKept RestoreAction = "exists-kept"
	// RestoreExcluded: left out by the restore spec (resources,
	// namespaces, cluster scope, label selectors).
	RestoreExcluded RestoreAction = "excluded"
	// RestoreFail: Velero tries and fails (an error or a warning in its
	// results, "failed" or not listed): the restore ends PartiallyFailed
	// for it. Reason gives Velero's cause: a namespace mapping onto an
	// invalid namespace name, a label selector Velero cannot convert, a
	// kept node port another Service holds, a patch the apiserver refuses
	// on an immutable field.
	RestoreFail RestoreAction = "fail"
	// RestoreNever: Velero never restores it: its built-in exclusions,
	// completed pods and jobs, mirror pods.
	RestoreNever RestoreAction = "never-restored"
)

// PlanItem is one item of a RestorePlan.
type PlanItem struct {
	// Resource is the group-resource, as the archive's folder names it
	// ("configmaps", "deployments.apps").
	Resource string `json:"resource"`
	// APIVersion and Kind are the backed-up item's.
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	// Namespace is the item's namespace in the backup ("" cluster-scoped).
	Namespace string `json:"namespace,omitempty"`
	// TargetNamespace is where it restores to (after namespaceMapping).
	TargetNamespace string `json:"targetNamespace,omitempty"`
	// Name is the item's name.
	Name string `json:"name"`
	// Action is what the restore does with it.
	Action RestoreAction `json:"action"`
	// Reason says why, for every action but create.
	Reason string `json:"reason,omitempty"`
	// Diff lists the fields that differ from the cluster's copy (for at
	// most 100 items of a plan), as dotted paths.
	Diff []string `json:"diff,omitempty"`
	// RestoreStatus says Velero also restores the item's status.
	RestoreStatus bool `json:"restoreStatus,omitempty"`
	// VeleroResult is how Velero's restored-resource list
	// (restores/<name>/restore-<name>-resource-list.json.gz) will report
	// the item: created, updated, skipped or failed; "" when it will not
	// list it. When Velero's own order decides (two backed-up items
	// restore onto one target, and Velero restores whichever it meets
	// first, in Go map order), it is "one of: " and the results it may
	// list, comma-separated (CompareResults reads it so).
	VeleroResult string `json:"veleroResult,omitempty"`
	// Approximate says a restore item action of Velero changes this kind
	// of item in ways the plan does not model (see Reason).
	Approximate bool `json:"approximate,omitempty"`
}

// ID names the item as Velero's restored-resource list does:
// "<apiVersion>/<Kind> [<targetNamespace>/]<name>".
func (i PlanItem) ID() string {
	name := i.Name
	if i.TargetNamespace != "" {
		name = i.TargetNamespace + "/" + name
	}
	return i.APIVersion + "/" + i.Kind + " " + name
}

// RestorePlan is what a Velero restore of a backup would do to a cluster,
// item by item, in Velero's restore order.
type RestorePlan struct {
	// Backup is the backup's name.
	Backup string `json:"backup"`
	// ExistingResourcePolicy is the spec's ("" is Velero's default, which
	// behaves as none).
	ExistingResourcePolicy string `json:"existingResourcePolicy,omitempty"`
	// Items are in restore order: resources by Velero's priorities, then
	// target namespace and name. (Velero's own order of namespaces within
	// a resource is a Go map's, so random: restore.go:993.)
	Items []PlanItem `json:"items"`
	// Counts counts the items by action.
	Counts map[RestoreAction]int `json:"counts"`
	// Verify is the verification of the backup made in the same read.
	Verify *VerifyReport `json:"-"`
}

// VeleroResults returns, for each item Velero will list, its ID and
// result, as Velero's restored-resource list holds them.
func (p *RestorePlan) VeleroResults() map[string]string {
	out := map[string]string{}
	for _, it := range p.Items {
		if it.VeleroResult != "" {
			out[it.ID()] = it.VeleroResult
		}
	}
	return out
}

// String prints the plan as a table, with its counts.
func (p *RestorePlan) String() string {
	var b, table strings.Builder
	fmt.Fprintf(&b, "restore plan for backup %s", p.Backup)
	if p.ExistingResourcePolicy != "" {
		fmt.Fprintf(&b, " (existingResourcePolicy %s)", p.ExistingResourcePolicy)
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&table, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ACTION\tRESOURCE\tITEM\tVELERO\tDETAIL")
	for _, it := range p.Items {
		detail := it.Reason
		if len(it.Diff) > 0 {
			detail = strings.TrimPrefix(detail+"; differs in "+strings.Join(it.Diff, ", "), "; ")
		}
		if it.RestoreStatus {
			detail = strings.TrimPrefix(detail+"; with status", "; ")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", it.Action, it.Resource, it.ID(), orDash(it.VeleroResult), detail)
	}
	tw.Flush()
	for _, line := range strings.SplitAfter(table.String(), "\n") {
		b.WriteString(strings.TrimRight(line, " \n"))
		if strings.HasSuffix(line, "\n") {
			b.WriteString("\n")
		}
	}
	var counts []string
	for a, n := range p.Counts {
		counts = append(counts, fmt.Sprintf("%s %d", a, n))
	}
	sort.Strings(counts)
	fmt.Fprintf(&b, "%d items: %s\n", len(p.Items), strings.Join(counts, ", "))
	return b.String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
