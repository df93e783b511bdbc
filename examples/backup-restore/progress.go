package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	velerov1 "github.com/vmware-tanzu/velero/pkg/apis/velero/v1"

	"github.com/cozystack/tenantkit/backup"
	"github.com/cozystack/tenantkit/internal/examplecli"
)

// waitBackup waits for a backup with a progress line and one line per
// phase change.
func waitBackup(ctx context.Context, c *backup.Client, name string) (*velerov1.Backup, error) {
	step := examplecli.Step(os.Stderr, "backing up "+name)
	b, err := c.WaitBackup(ctx, name, backup.WaitOptions{Progress: phaseLine})
	step.Done(err)
	return b, exitFor(err)
}

func waitRestore(ctx context.Context, c *backup.Client, name string) error {
	step := examplecli.Step(os.Stderr, "restoring "+name)
	r, err := c.WaitRestore(ctx, name, backup.WaitOptions{Progress: phaseLine})
	step.Done(err)
	if r != nil && r.Status.Warnings > 0 {
		fmt.Fprintf(os.Stderr, "    %d warnings (objects that already existed are skipped)\n", r.Status.Warnings)
	}
	return exitFor(err)
}

func phaseLine(p backup.Progress) {
	items := ""
	if p.ItemsTotal > 0 {
		items = fmt.Sprintf(", %d/%d items", p.ItemsDone, p.ItemsTotal)
	}
	fmt.Fprintf(os.Stderr, "    %s %s: %s%s (%s)\n", p.Kind, p.Name, p.Phase, items, p.Elapsed.Round(100*time.Millisecond))
}

// exitFor maps Velero outcomes to exit codes: a failed or refused
// backup/restore is ExitFailure.
func exitFor(err error) error {
	var pe *backup.PhaseError
	if errors.As(err, &pe) {
		return examplecli.WithCode(examplecli.ExitFailure, err)
	}
	return err
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
