package backup

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	velerov1 "github.com/vmware-tanzu/velero/pkg/apis/velero/v1"
)

// Description summarizes a backup: the Backup object's status and, when
// read from the bucket, its error and warning messages and item counts.
type Description struct {
	// Name and Phase of the backup.
	Name, Phase string
	// IncludedNamespaces as requested (empty: all).
	IncludedNamespaces []string
	// StorageLocation is the location it was written to.
	StorageLocation string
	// Started, Completed and Expires are zero when unknown.
	Started, Completed, Expires time.Time
	// ItemsDone and ItemsTotal are Velero's progress counts.
	ItemsDone, ItemsTotal int
	// Errors and Warnings are Velero's counts.
	Errors, Warnings int
	// ValidationErrors are the reasons for FailedValidation.
	ValidationErrors []string
	// FailureReason is the reason for Failed.
	FailureReason string
	// Results holds the messages, when read from the bucket.
	Results *Results
	// Resources counts items per group/version/Kind, when read from the
	// bucket.
	Resources map[string]int
}

// Describe summarizes a Backup object. It does no I/O.
func Describe(b *velerov1.Backup) Description {
	d := Description{
		Name: b.Name, Phase: string(backupPhase(b)), IncludedNamespaces: b.Spec.IncludedNamespaces,
		StorageLocation: b.Spec.StorageLocation, Errors: b.Status.Errors, Warnings: b.Status.Warnings,
		ValidationErrors: b.Status.ValidationErrors, FailureReason: b.Status.FailureReason,
	}
	if t := b.Status.StartTimestamp; t != nil {
		d.Started = t.Time
	}
	if t := b.Status.CompletionTimestamp; t != nil {
		d.Completed = t.Time
	}
	if t := b.Status.Expiration; t != nil {
		d.Expires = t.Time
	}
	if p := b.Status.Progress; p != nil {
		d.ItemsDone, d.ItemsTotal = p.ItemsBackedUp, p.TotalItems
	}
	return d
}

// DescribeBackup describes backup name. With a non-nil store it adds the
// error and warning messages and the item counts, read from the bucket
// (no DownloadRequest, so it works without network access from Velero to
// the caller); files that are missing in the bucket are left out.
func (c *Client) DescribeBackup(ctx context.Context, name string, store *Store) (Description, error) {
	b, err := c.Backup(ctx, name)
	if err != nil {
		return Description{}, err
	}
	d := Describe(b)
	if store == nil || !BackupTerminal(b.Status.Phase) || b.Status.Phase == velerov1.BackupPhaseFailedValidation {
		return d, nil
	}
	res, err := store.Results(ctx, name)
	switch {
	case err == nil:
		d.Results = &res
	case !errors.Is(err, ErrNotFound):
		return d, fmt.Errorf("describe %s: %w", name, err)
	}
	list, err := store.ResourceList(ctx, name)
	switch {
	case err == nil:
		d.Resources = map[string]int{}
		for gvk, items := range list {
			d.Resources[gvk] = len(items)
		}
	case !errors.Is(err, ErrNotFound):
		return d, fmt.Errorf("describe %s: %w", name, err)
	}
	return d, nil
}

// String renders the description as an aligned, human-readable block.
func (d Description) String() string {
	var sb strings.Builder
	tw := tabwriter.NewWriter(&sb, 0, 4, 2, ' ', 0)
	row := func(k, v string) {
		if v != "" {
			fmt.Fprintf(tw, "%s:\t%s\n", k, v)
		}
	}
	ts := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format(time.RFC3339)
	}
	ns := "*"
	if len(d.IncludedNamespaces) > 0 {
		ns = strings.Join(d.IncludedNamespaces, ", ")
	}
	row("Name", d.Name)
	row("Phase", d.Phase)
	row("Namespaces", ns)
	row("Location", d.StorageLocation)
	row("Started", ts(d.Started))
	row("Completed", ts(d.Completed))
	row("Expires", ts(d.Expires))
	if d.ItemsTotal > 0 {
		row("Items", fmt.Sprintf("%d of %d", d.ItemsDone, d.ItemsTotal))
	}
	row("Errors", fmt.Sprint(d.Errors))
	row("Warnings", fmt.Sprint(d.Warnings))
	row("Failure", d.FailureReason)
	for _, v := range d.ValidationErrors {
		row("Validation error", v)
	}
	for _, gvk := range sortedKeys(d.Resources) {
		row("  "+gvk, fmt.Sprint(d.Resources[gvk]))
	}
	if d.Results != nil {
		for _, m := range d.Results.Errors.Messages() {
			row("Error", m)
		}
		for _, m := range d.Results.Warnings.Messages() {
			row("Warning", m)
		}
	}
	tw.Flush()
	return sb.String()
}
