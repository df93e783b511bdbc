package backup

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	velerov1 "github.com/vmware-tanzu/velero/pkg/apis/velero/v1"
)

// Policy says which backups to keep. A backup is kept when any rule keeps
// it; every other usable backup is deleted. Only usable backups
// (Completed, PartiallyFailed) count towards the rules.
type Policy struct {
	// KeepLast keeps the newest N usable backups.
	KeepLast int
	// KeepDaily, KeepWeekly and KeepMonthly keep the newest usable backup
	// of each of the newest N days, ISO weeks and months that have one.
	KeepDaily, KeepWeekly, KeepMonthly int
	// TimeZone decides where days, weeks and months begin. Default UTC.
	TimeZone *time.Location
	// Schedule, when set, limits the plan to the backups of that schedule
	// (label velero.io/schedule-name); other backups are left out of it.
	Schedule string
	// DeleteFailed also deletes backups that ended Failed or
	// FailedValidation (by default they are kept and listed, untouched).
	DeleteFailed bool
}

// Decision is what a plan does with one backup, and why.
type Decision struct {
	// Backup is the backup's name.
	Backup string
	// Time is the time the plan ordered it by (completion, else start,
	// else creation).
	Time time.Time
	// Phase is the backup's phase.
	Phase string
	// Reasons say why it is kept or deleted.
	Reasons []string
}

// Plan is a retention plan: a plain value to print (a dry run) before an
// executor applies it.
type Plan struct {
	// Keep and Delete list the decisions, newest first.
	Keep, Delete []Decision
}

// PlanRetention decides which backups policy keeps and which it deletes.
// In-flight backups (and those being deleted) are always kept. It returns
// ErrInvalidPolicy for a policy that would keep nothing.
func PlanRetention(backups []velerov1.Backup, p Policy) (Plan, error) {
	if p.KeepLast < 0 || p.KeepDaily < 0 || p.KeepWeekly < 0 || p.KeepMonthly < 0 {
		return Plan{}, fmt.Errorf("%w: negative counts", ErrInvalidPolicy)
	}
	if p.KeepLast+p.KeepDaily+p.KeepWeekly+p.KeepMonthly == 0 {
		return Plan{}, fmt.Errorf("%w: it keeps no backup; set KeepLast, KeepDaily, KeepWeekly or KeepMonthly", ErrInvalidPolicy)
	}
	tz := p.TimeZone
	if tz == nil {
		tz = time.UTC
	}
	var ds []*Decision
	for i := range backups {
		b := &backups[i]
		if p.Schedule != "" && b.Labels[velerov1.ScheduleNameLabel] != p.Schedule {
			continue
		}
		ds = append(ds, &Decision{Backup: b.Name, Time: backupTime(b), Phase: string(backupPhase(b))})
	}
	sort.SliceStable(ds, func(i, j int) bool {
		if !ds[i].Time.Equal(ds[j].Time) {
			return ds[i].Time.After(ds[j].Time)
		}
		return ds[i].Backup > ds[j].Backup
	})
	rules := []struct {
		n      int
		reason string
		period func(time.Time) string
	}{
		{p.KeepLast, "last %d", nil},
		{p.KeepDaily, "daily %d", func(t time.Time) string { return t.In(tz).Format("2006-01-02") }},
		{p.KeepWeekly, "weekly %d", func(t time.Time) string { y, w := t.In(tz).ISOWeek(); return fmt.Sprintf("%d-W%02d", y, w) }},
		{p.KeepMonthly, "monthly %d", func(t time.Time) string { return t.In(tz).Format("2006-01") }},
	}
	keep := map[*Decision]bool{}
	for _, r := range rules {
		if r.n == 0 {
			continue
		}
		seen := map[string]bool{}
		for i, d := range ds {
			if len(seen) == r.n {
				break
			}
			if !backupUsable(velerov1.BackupPhase(d.Phase)) {
				continue
			}
			key, label := fmt.Sprint(i), "newest"
			if r.period != nil {
				key = r.period(d.Time)
				label = key
			}
			if seen[key] {
				continue
			}
			seen[key] = true
			keep[d] = true
			d.Reasons = append(d.Reasons, fmt.Sprintf(r.reason+" (%s)", len(seen), label))
		}
	}
	var plan Plan
	for _, d := range ds {
		phase := velerov1.BackupPhase(d.Phase)
		switch {
		case keep[d]:
			plan.Keep = append(plan.Keep, *d)
		case !BackupTerminal(phase):
			d.Reasons = []string{"in flight (" + d.Phase + ")"}
			plan.Keep = append(plan.Keep, *d)
		case !backupUsable(phase) && !p.DeleteFailed:
			d.Reasons = []string{"not usable (" + d.Phase + "); kept, set DeleteFailed to remove"}
			plan.Keep = append(plan.Keep, *d)
		case !backupUsable(phase):
			d.Reasons = []string{"not usable (" + d.Phase + ")"}
			plan.Delete = append(plan.Delete, *d)
		default:
			d.Reasons = []string{"not kept by any rule"}
			plan.Delete = append(plan.Delete, *d)
		}
	}
	return plan, nil
}

// backupTime is when a backup happened: completion, else start, else
// creation.
func backupTime(b *velerov1.Backup) time.Time {
	switch {
	case b.Status.CompletionTimestamp != nil:
		return b.Status.CompletionTimestamp.Time
	case b.Status.StartTimestamp != nil:
		return b.Status.StartTimestamp.Time
	}
	return b.CreationTimestamp.Time
}

// String renders the plan as a table: action, backup, time, phase, reasons.
func (p Plan) String() string {
	var sb strings.Builder
	tw := tabwriter.NewWriter(&sb, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ACTION\tBACKUP\tTIME\tPHASE\tWHY")
	rows := func(action string, ds []Decision) {
		for _, d := range ds {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", action, d.Backup, d.Time.UTC().Format(time.RFC3339), d.Phase, strings.Join(d.Reasons, ", "))
		}
	}
	rows("keep", p.Keep)
	rows("delete", p.Delete)
	tw.Flush()
	return sb.String()
}

// ExecuteRetention deletes the plan's Delete list through
// DeleteBackupRequests (see DeleteBackup), one backup after the other, and
// returns the names deleted. Backups already gone count as deleted, so a
// plan can be executed again after an interruption. It stops at the first
// error.
func (c *Client) ExecuteRetention(ctx context.Context, plan Plan) ([]string, error) {
	var done []string
	for _, d := range plan.Delete {
		err := c.DeleteBackup(ctx, d.Backup, DeleteOptions{})
		if err != nil && !errors.Is(err, ErrNotFound) {
			return done, fmt.Errorf("execute retention: %w", err)
		}
		done = append(done, d.Backup)
	}
	return done, nil
}
