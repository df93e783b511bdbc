package backup

import (
	"context"
	"fmt"
	"time"

	velerov1 "github.com/vmware-tanzu/velero/pkg/apis/velero/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BackupOptions describes a backup to create.
type BackupOptions struct {
	// Name is the Backup's name. Required.
	Name string
	// IncludedNamespaces are the namespaces to back up (globs allowed);
	// empty means all.
	IncludedNamespaces []string
	// ExcludedNamespaces are namespaces to leave out.
	ExcludedNamespaces []string
	// LabelSelector, when set, backs up only matching items.
	LabelSelector *metav1.LabelSelector
	// TTL is how long Velero keeps the backup before garbage-collecting
	// it. Zero takes the server's default (720h).
	TTL time.Duration
	// SnapshotMoveData uploads CSI snapshot data to the bucket (what
	// Cozystack's guide uses). Nil takes the server's default.
	SnapshotMoveData *bool
	// StorageLocation is the BackupStorageLocation. Empty means the
	// default location.
	StorageLocation string
	// Labels are added to the Backup object.
	Labels map[string]string
}

// backupSpec returns the velero.io/v1 BackupSpec for o.
func (o BackupOptions) backupSpec() velerov1.BackupSpec {
	spec := velerov1.BackupSpec{
		IncludedNamespaces: o.IncludedNamespaces,
		ExcludedNamespaces: o.ExcludedNamespaces,
		LabelSelector:      o.LabelSelector,
		SnapshotMoveData:   o.SnapshotMoveData,
		StorageLocation:    o.StorageLocation,
	}
	if o.TTL > 0 {
		spec.TTL = metav1.Duration{Duration: o.TTL}
	}
	return spec
}

// CreateBackup creates a Backup object; Velero's server then runs it. Use
// WaitBackup to wait for the result.
func (c *Client) CreateBackup(ctx context.Context, o BackupOptions) (*velerov1.Backup, error) {
	if o.Name == "" {
		return nil, fmt.Errorf("%w: backup needs a name", ErrInvalidConfig)
	}
	b := &velerov1.Backup{
		TypeMeta:   metav1.TypeMeta{APIVersion: velerov1.SchemeGroupVersion.String(), Kind: "Backup"},
		ObjectMeta: metav1.ObjectMeta{Name: o.Name, Namespace: c.ns, Labels: o.Labels},
		Spec:       o.backupSpec(),
	}
	var out velerov1.Backup
	if err := c.create(ctx, "backups", b, &out); err != nil {
		return nil, fmt.Errorf("create backup %s: %w", o.Name, err)
	}
	c.log.Debug("backup created", "name", o.Name)
	return &out, nil
}

// Backup returns the Backup object called name.
func (c *Client) Backup(ctx context.Context, name string) (*velerov1.Backup, error) {
	var b velerov1.Backup
	if err := c.get(ctx, "backups", name, &b); err != nil {
		return nil, fmt.Errorf("get backup %s: %w", name, err)
	}
	return &b, nil
}

// Backups lists the Backup objects matching the label selector ("" for
// all).
func (c *Client) Backups(ctx context.Context, selector string) ([]velerov1.Backup, error) {
	var list velerov1.BackupList
	if err := c.list(ctx, "backups", selector, &list); err != nil {
		return nil, fmt.Errorf("list backups: %w", err)
	}
	return list.Items, nil
}

// Progress is a snapshot of a running backup or restore, passed to
// WaitOptions.Progress whenever it changes.
type Progress struct {
	// Kind is "Backup" or "Restore"; Name is the object's name.
	Kind, Name string
	// Phase is the current phase ("New" while Velero has not picked it up).
	Phase string
	// QueuePosition is the place in Velero's queue while Queued.
	QueuePosition int
	// ItemsDone and ItemsTotal are Velero's best-effort item counts.
	ItemsDone, ItemsTotal int
	// Elapsed is the time since the wait began.
	Elapsed time.Duration
}

// WaitOptions tunes the Wait methods.
type WaitOptions struct {
	// Progress, when set, is called with each new phase or item count.
	Progress func(Progress)
}

// WaitBackup waits until backup name reaches a terminal phase and returns
// it. The error is nil for Completed and a *PhaseError otherwise:
// ErrFailedValidation (with Velero's validation errors), ErrFailed (with
// the failure reason) or ErrPartiallyFailed (the backup is usable). When
// ctx ends first it returns ctx's error with the last phase seen.
func (c *Client) WaitBackup(ctx context.Context, name string, opts WaitOptions) (*velerov1.Backup, error) {
	start := time.Now()
	var last velerov1.Backup
	var seen Progress
	err := c.poll(ctx, func() (bool, error) {
		if err := c.get(ctx, "backups", name, &last); err != nil {
			if ctx.Err() != nil {
				return false, ctx.Err()
			}
			return false, fmt.Errorf("get backup %s: %w", name, err)
		}
		p := Progress{Kind: "Backup", Name: name, Phase: string(backupPhase(&last)),
			QueuePosition: last.Status.QueuePosition, Elapsed: time.Since(start)}
		if pr := last.Status.Progress; pr != nil {
			p.ItemsDone, p.ItemsTotal = pr.ItemsBackedUp, pr.TotalItems
		}
		report(opts.Progress, &seen, p)
		return BackupTerminal(last.Status.Phase), nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("wait for backup %s (last phase %s): %w", name, backupPhase(&last), err)
		}
		return nil, err
	}
	return &last, backupResult(&last)
}

// report calls fn when p differs from the last report in anything but
// Elapsed.
func report(fn func(Progress), seen *Progress, p Progress) {
	if fn == nil {
		return
	}
	cmp := p
	cmp.Elapsed = seen.Elapsed
	if cmp == *seen {
		return
	}
	*seen = p
	fn(p)
}

// DeleteOptions tunes DeleteBackup.
type DeleteOptions struct {
	// NoWait returns once the DeleteBackupRequest exists, without waiting
	// for Velero to process it.
	NoWait bool
}

// DeleteBackup deletes backup name, its data in the bucket and its
// restores the only correct way: through a DeleteBackupRequest that
// Velero's server processes. (Deleting the Backup object alone leaves the
// data, and the next bucket sync brings the object back.) Unless
// opts.NoWait is set it waits until the Backup object is gone, and returns
// a *DeleteError (ErrDeleteFailed) when Velero refuses or fails. Deleting
// a backup that does not exist returns ErrNotFound; callers re-running a
// deletion may ignore it.
func (c *Client) DeleteBackup(ctx context.Context, name string, opts DeleteOptions) error {
	b, err := c.Backup(ctx, name)
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("delete backup %s: %w", name, ErrNotFound)
	}
	if err != nil {
		return err
	}
	req := &velerov1.DeleteBackupRequest{
		TypeMeta: metav1.TypeMeta{APIVersion: velerov1.SchemeGroupVersion.String(), Kind: "DeleteBackupRequest"},
		ObjectMeta: metav1.ObjectMeta{GenerateName: name + "-", Namespace: c.ns, Labels: map[string]string{
			velerov1.BackupNameLabel: labelValue(name),
			velerov1.BackupUIDLabel:  string(b.UID),
		}},
		Spec: velerov1.DeleteBackupRequestSpec{BackupName: name},
	}
	var created velerov1.DeleteBackupRequest
	if err := c.create(ctx, "deletebackuprequests", req, &created); err != nil {
		return fmt.Errorf("delete backup %s: %w", name, err)
	}
	c.log.Debug("delete requested", "backup", name, "request", created.Name)
	if opts.NoWait {
		return nil
	}
	return c.poll(ctx, func() (bool, error) {
		var dbr velerov1.DeleteBackupRequest
		err := c.get(ctx, "deletebackuprequests", created.Name, &dbr)
		if err == nil && dbr.Status.Phase == velerov1.DeleteBackupRequestPhaseProcessed && len(dbr.Status.Errors) > 0 {
			return false, &DeleteError{Backup: name, Request: created.Name, Errors: dbr.Status.Errors}
		}
		if err != nil && !apierrors.IsNotFound(err) {
			return false, fmt.Errorf("delete backup %s: %w", name, err)
		}
		_, err = c.Backup(ctx, name)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, nil
	})
}
