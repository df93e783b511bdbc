package backup

import (
	"context"
	"fmt"
	"time"

	velerov1 "github.com/vmware-tanzu/velero/pkg/apis/velero/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ExistingResourcePolicy says what a restore does with an object that
// already exists in the cluster.
type ExistingResourcePolicy string

const (
	// ExistingSkip leaves existing objects alone and records a warning
	// (Velero's default, "none").
	ExistingSkip ExistingResourcePolicy = "none"
	// ExistingUpdate patches existing objects to the backed-up version.
	ExistingUpdate ExistingResourcePolicy = "update"
)

// RestoreOptions describes a restore to create.
type RestoreOptions struct {
	// Name is the Restore's name. Required.
	Name string
	// BackupName is the backup to restore from. Exactly one of BackupName
	// and ScheduleName is required.
	BackupName string
	// ScheduleName restores the newest Completed backup of a schedule.
	ScheduleName string
	// IncludedNamespaces are the namespaces to restore; empty means all in
	// the backup.
	IncludedNamespaces []string
	// ExcludedNamespaces are namespaces to leave out.
	ExcludedNamespaces []string
	// NamespaceMapping restores namespace keys into namespace values.
	NamespaceMapping map[string]string
	// ExistingResourcePolicy decides about objects that exist already.
	// Default ExistingSkip.
	ExistingResourcePolicy ExistingResourcePolicy
	// LabelSelector, when set, restores only matching items.
	LabelSelector *metav1.LabelSelector
}

// CreateRestore creates a Restore object; Velero's server then runs it. A
// backup made by another cluster appears here only after Velero has synced
// the bucket (every minute by default); creating a Restore before that
// ends in FailedValidation.
func (c *Client) CreateRestore(ctx context.Context, o RestoreOptions) (*velerov1.Restore, error) {
	if o.Name == "" {
		return nil, fmt.Errorf("%w: restore needs a name", ErrInvalidConfig)
	}
	if (o.BackupName == "") == (o.ScheduleName == "") {
		return nil, fmt.Errorf("%w: restore %s needs exactly one of BackupName and ScheduleName", ErrInvalidConfig, o.Name)
	}
	switch o.ExistingResourcePolicy {
	case "", ExistingSkip, ExistingUpdate:
	default:
		return nil, fmt.Errorf("%w: existing resource policy %q (want %q or %q)", ErrInvalidConfig, o.ExistingResourcePolicy, ExistingSkip, ExistingUpdate)
	}
	r := &velerov1.Restore{
		TypeMeta:   metav1.TypeMeta{APIVersion: velerov1.SchemeGroupVersion.String(), Kind: "Restore"},
		ObjectMeta: metav1.ObjectMeta{Name: o.Name, Namespace: c.ns},
		Spec: velerov1.RestoreSpec{
			BackupName:             o.BackupName,
			ScheduleName:           o.ScheduleName,
			IncludedNamespaces:     o.IncludedNamespaces,
			ExcludedNamespaces:     o.ExcludedNamespaces,
			NamespaceMapping:       o.NamespaceMapping,
			LabelSelector:          o.LabelSelector,
			ExistingResourcePolicy: velerov1.PolicyType(o.ExistingResourcePolicy),
		},
	}
	var out velerov1.Restore
	if err := c.create(ctx, "restores", r, &out); err != nil {
		return nil, fmt.Errorf("create restore %s: %w", o.Name, err)
	}
	return &out, nil
}

// Restore returns the Restore object called name.
func (c *Client) Restore(ctx context.Context, name string) (*velerov1.Restore, error) {
	var r velerov1.Restore
	if err := c.get(ctx, "restores", name, &r); err != nil {
		return nil, fmt.Errorf("get restore %s: %w", name, err)
	}
	return &r, nil
}

// WaitRestore waits until restore name reaches a terminal phase, with the
// same results as WaitBackup. A restore that skipped existing objects ends
// Completed with warnings: check Status.Warnings and the restore results.
func (c *Client) WaitRestore(ctx context.Context, name string, opts WaitOptions) (*velerov1.Restore, error) {
	start := time.Now()
	var last velerov1.Restore
	var seen Progress
	err := c.poll(ctx, func() (bool, error) {
		if err := c.get(ctx, "restores", name, &last); err != nil {
			if ctx.Err() != nil {
				return false, ctx.Err()
			}
			return false, fmt.Errorf("get restore %s: %w", name, err)
		}
		p := Progress{Kind: "Restore", Name: name, Phase: string(restorePhase(&last)), Elapsed: time.Since(start)}
		if pr := last.Status.Progress; pr != nil {
			p.ItemsDone, p.ItemsTotal = pr.ItemsRestored, pr.TotalItems
		}
		report(opts.Progress, &seen, p)
		return restoreTerminal(last.Status.Phase), nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("wait for restore %s (last phase %s): %w", name, restorePhase(&last), err)
		}
		return nil, err
	}
	return &last, restoreResult(&last)
}
