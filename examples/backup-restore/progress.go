package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	velerov1 "github.com/vmware-tanzu/velero/pkg/apis/velero/v1"

	"github.com/cozystack/tenantkit/backup"
	"github.com/cozystack/tenantkit/cli"
)

// waitBackup waits for a backup with a progress line and one line per
// phase change.
func waitBackup(ctx context.Context, o *options, c *backup.Client, name string) (*velerov1.Backup, error) {
	step := cli.Step(o.progress, "backing up "+name)
	b, err := c.WaitBackup(ctx, name, backup.WaitOptions{Progress: o.phaseLine})
	step.Done(err)
	return b, exitFor(err)
}

// waitRestore waits for a restore the same way and prints its outcome.
func waitRestore(ctx context.Context, o *options, c *backup.Client, name string) error {
	step := cli.Step(o.progress, "restoring "+name)
	r, err := c.WaitRestore(ctx, name, backup.WaitOptions{Progress: o.phaseLine})
	step.Done(err)
	if r != nil {
		items := "-"
		if p := r.Status.Progress; p != nil {
			items = fmt.Sprintf("%d of %d", p.ItemsRestored, p.TotalItems)
		}
		cli.Table(o.out, []string{"RESTORE", "BACKUP", "PHASE", "ITEMS", "ERRORS", "WARNINGS"},
			[][]string{{r.Name, r.Spec.BackupName, string(r.Status.Phase), items, fmt.Sprint(r.Status.Errors), fmt.Sprint(r.Status.Warnings)}})
		if r.Status.Warnings > 0 {
			fmt.Fprintln(o.progress, "    (objects that already existed are skipped with a warning)")
		}
	}
	return exitFor(err)
}

func (o *options) phaseLine(p backup.Progress) {
	items := ""
	if p.ItemsTotal > 0 {
		items = fmt.Sprintf(", %d/%d items", p.ItemsDone, p.ItemsTotal)
	}
	fmt.Fprintf(o.progress, "    %s %s: %s%s (%s)\n", p.Kind, p.Name, p.Phase, items, p.Elapsed.Round(100*time.Millisecond))
}

// exitFor maps Velero outcomes to exit codes: a failed or refused
// backup/restore, or running out of --timeout, is ExitFailure; losing the cluster while waiting is
// ExitUnavailable.
func exitFor(err error) error {
	var pe *backup.PhaseError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &pe), errors.Is(err, context.DeadlineExceeded):
		return cli.WithCode(cli.ExitFailure, err)
	default:
		return cli.WithCode(cli.ExitUnavailable, err)
	}
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05")
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
