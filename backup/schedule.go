package backup

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	velerov1 "github.com/vmware-tanzu/velero/pkg/apis/velero/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/util/retry"
)

// ScheduleOptions describes a schedule of backups.
type ScheduleOptions struct {
	// Name is the Schedule's name. Required. Its backups are named
	// <name>-<YYYYMMDDhhmmss> and labelled velero.io/schedule-name=<name>.
	Name string
	// Cron is the schedule, in 5-field cron syntax or @every/@daily forms.
	// Required.
	Cron string
	// Template describes each backup (its Name is ignored).
	Template BackupOptions
	// Paused creates the schedule paused: Velero makes no backups from it
	// until UnpauseSchedule.
	Paused bool
	// SkipImmediately, with Paused, skips the backup that is due when the
	// schedule is first unpaused (Velero then waits for the next cron
	// time). A schedule created unpaused makes its first backup at the
	// first cron time after its creation either way.
	SkipImmediately bool
}

// CreateSchedule creates a Schedule object.
func (c *Client) CreateSchedule(ctx context.Context, o ScheduleOptions) (*velerov1.Schedule, error) {
	if o.Name == "" || o.Cron == "" {
		return nil, fmt.Errorf("%w: schedule needs a name and a cron expression", ErrInvalidConfig)
	}
	skip := o.SkipImmediately
	s := &velerov1.Schedule{
		TypeMeta:   metav1.TypeMeta{APIVersion: velerov1.SchemeGroupVersion.String(), Kind: "Schedule"},
		ObjectMeta: metav1.ObjectMeta{Name: o.Name, Namespace: c.ns},
		Spec: velerov1.ScheduleSpec{
			Template: o.Template.backupSpec(), Schedule: o.Cron, Paused: o.Paused, SkipImmediately: &skip,
		},
	}
	var out velerov1.Schedule
	if err := c.create(ctx, "schedules", s, &out); err != nil {
		return nil, fmt.Errorf("create schedule %s: %w", o.Name, err)
	}
	return &out, nil
}

// Schedule returns the Schedule object called name.
func (c *Client) Schedule(ctx context.Context, name string) (*velerov1.Schedule, error) {
	var s velerov1.Schedule
	if err := c.get(ctx, "schedules", name, &s); err != nil {
		return nil, fmt.Errorf("get schedule %s: %w", name, err)
	}
	return &s, nil
}

// ScheduleBackups lists the backups that schedule name has made, newest
// first: the Backup objects Velero labelled velero.io/schedule-name=<name>
// (named <name>-<YYYYMMDDhhmmss>), in any phase. Backups synced from the
// bucket keep their label, so a cluster that shares the bucket lists them
// too.
func (c *Client) ScheduleBackups(ctx context.Context, name string) ([]velerov1.Backup, error) {
	if errs := validation.IsValidLabelValue(name); name == "" || len(errs) > 0 {
		return nil, fmt.Errorf("%w: schedule name %q is not a label value", ErrInvalidConfig, name)
	}
	list, err := c.Backups(ctx, velerov1.ScheduleNameLabel+"="+name)
	if err != nil {
		return nil, fmt.Errorf("backups of schedule %s: %w", name, err)
	}
	slices.SortFunc(list, func(a, b velerov1.Backup) int {
		if d := b.CreationTimestamp.Compare(a.CreationTimestamp.Time); d != 0 {
			return d
		}
		return cmp.Compare(b.Name, a.Name)
	})
	return list, nil
}

// UnpauseOptions tunes UnpauseSchedule.
type UnpauseOptions struct {
	// SkipImmediately skips the backup that fell due while the schedule
	// was paused; Velero then waits for the next cron time. By default
	// Velero takes that backup at once.
	SkipImmediately bool
}

// PauseSchedule pauses schedule name, like `velero schedule pause`: Velero
// makes no backups from it until UnpauseSchedule (a backup already running
// finishes). Pausing a paused schedule changes nothing.
func (c *Client) PauseSchedule(ctx context.Context, name string) (*velerov1.Schedule, error) {
	return c.setPaused(ctx, name, true, UnpauseOptions{})
}

// UnpauseSchedule resumes schedule name, like `velero schedule unpause`.
// If a backup fell due while it was paused, Velero takes it at once
// unless o.SkipImmediately. Unpausing a running schedule changes nothing.
func (c *Client) UnpauseSchedule(ctx context.Context, name string, o UnpauseOptions) (*velerov1.Schedule, error) {
	return c.setPaused(ctx, name, false, o)
}

// setPaused updates spec.paused, retrying on conflicts with Velero's own
// updates of the object.
func (c *Client) setPaused(ctx context.Context, name string, paused bool, o UnpauseOptions) (*velerov1.Schedule, error) {
	verb := map[bool]string{true: "pause", false: "unpause"}[paused]
	var out velerov1.Schedule
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var s velerov1.Schedule
		if err := c.get(ctx, "schedules", name, &s); err != nil {
			return err
		}
		if s.Spec.Paused == paused {
			out = s
			return nil
		}
		s.Spec.Paused = paused
		if !paused {
			skip := o.SkipImmediately
			s.Spec.SkipImmediately = &skip
		}
		return c.update(ctx, "schedules", name, &s, &out)
	})
	if err != nil {
		return nil, fmt.Errorf("%s schedule %s: %w", verb, name, err)
	}
	c.log.Debug("schedule "+verb+"d", "name", name)
	return &out, nil
}
