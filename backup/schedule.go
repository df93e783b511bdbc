package backup

import (
	"context"
	"fmt"

	velerov1 "github.com/vmware-tanzu/velero/pkg/apis/velero/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	// Paused creates the schedule paused.
	Paused bool
	// SkipImmediately skips the backup Velero would otherwise take as soon
	// as the schedule is created or unpaused.
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
			Template: o.Template.BackupSpec(), Schedule: o.Cron, Paused: o.Paused, SkipImmediately: &skip,
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
