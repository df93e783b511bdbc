package backup_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	velerov1 "github.com/vmware-tanzu/velero/pkg/apis/velero/v1"

	"github.com/cozystack/tenantkit/backup"
)

// scheduleRuns proves that a Schedule makes Velero back up: on its own
// (Velero checks its schedules once a minute, so the first backup of an
// "@every 2s" schedule appears within about a minute of its creation), and
// at once when a schedule that fell due while paused is unpaused. It
// pauses the schedule and deletes its backups at the end.
func scheduleRuns(ctx context.Context, a *cluster, e *s3Env) func(t *testing.T) {
	return func(t *testing.T) {
		const name = "frequent"
		_, err := a.velero.CreateSchedule(ctx, backup.ScheduleOptions{Name: name, Cron: "@every 2s",
			Template: backup.BackupOptions{IncludedNamespaces: []string{"demo"}, TTL: time.Hour}})
		require.NoError(t, err)
		t.Cleanup(func() { deleteScheduleBackups(t, ctx, a, e, name) })

		// On its own: Velero's schedule controller creates the Backup from
		// the template, labelled with the schedule's name.
		start := time.Now()
		first := waitScheduleBackup(t, ctx, a, name, nil, 90*time.Second)
		t.Logf("first backup of %s: %s after %s", name, first.Name, time.Since(start).Round(time.Second))
		require.True(t, strings.HasPrefix(first.Name, name+"-"), first.Name)
		require.Equal(t, name, first.Labels[velerov1.ScheduleNameLabel])
		require.Equal(t, []string{"demo"}, first.Spec.IncludedNamespaces)
		require.Equal(t, time.Hour, first.Spec.TTL.Duration)
		_, err = a.velero.WaitBackup(ctx, first.Name, backup.WaitOptions{})
		require.NoError(t, err)
		rep, err := e.store(t, backup.S3Config{}, "").Verify(ctx, first.Name, backup.VerifyOptions{})
		require.NoError(t, err)
		require.GreaterOrEqual(t, rep.Items, 7, "the demo namespace's objects")
		s, err := a.velero.Schedule(ctx, name)
		require.NoError(t, err)
		require.NotNil(t, s.Status.LastBackup, "Velero records the schedule's last backup")
		require.EqualValues(t, "Enabled", s.Status.Phase)

		// Paused; every backup it made has finished, and it falls due.
		s, err = a.velero.PauseSchedule(ctx, name)
		require.NoError(t, err)
		require.True(t, s.Spec.Paused)
		seen := finishScheduleBackups(t, ctx, a, name)
		s, err = a.velero.PauseSchedule(ctx, name)
		require.NoError(t, err, "pausing a paused schedule is a no-op")
		require.True(t, s.Spec.Paused)
		require.NotNil(t, s.Status.LastBackup)
		time.Sleep(time.Until(s.Status.LastBackup.Add(3 * time.Second)))
		list, err := a.velero.ScheduleBackups(ctx, name)
		require.NoError(t, err)
		require.Len(t, list, len(seen), "no backup while paused")

		// Unpaused: it fell due while paused, so Velero backs up at once
		// rather than at its next check of the schedules.
		s, err = a.velero.UnpauseSchedule(ctx, name, backup.UnpauseOptions{})
		require.NoError(t, err)
		require.False(t, s.Spec.Paused)
		next := waitScheduleBackup(t, ctx, a, name, seen, 30*time.Second)
		_, err = a.velero.WaitBackup(ctx, next.Name, backup.WaitOptions{})
		require.NoError(t, err)
		all, err := a.velero.ScheduleBackups(ctx, name)
		require.NoError(t, err)
		require.GreaterOrEqual(t, len(all), 2)
		require.Equal(t, next.Name, all[0].Name, "newest first")
	}
}

// deleteScheduleBackups pauses schedule name and deletes its backups the only
// correct way, through DeleteBackupRequests, so that the tests after it
// see only their own backups.
func deleteScheduleBackups(t *testing.T, ctx context.Context, a *cluster, e *s3Env, name string) {
	t.Helper()
	_, err := a.velero.PauseSchedule(ctx, name)
	require.NoError(t, err)
	for _, b := range finishScheduleBackups(t, ctx, a, name) {
		require.NoError(t, a.velero.DeleteBackup(ctx, b, backup.DeleteOptions{}))
	}
	left, err := a.velero.ScheduleBackups(ctx, name)
	require.NoError(t, err)
	require.Empty(t, left)
	inBucket := e.backupsInBucket(t, ctx, e.store(t, backup.S3Config{}, ""))
	require.False(t, slices.ContainsFunc(inBucket, func(n string) bool { return strings.HasPrefix(n, name+"-") }), inBucket)
}

// waitScheduleBackup waits up to timeout for a backup of schedule name
// that is not in seen, and returns it.
func waitScheduleBackup(t *testing.T, ctx context.Context, a *cluster, name string, seen []string, timeout time.Duration) velerov1.Backup {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		list, err := a.velero.ScheduleBackups(ctx, name)
		if ctx.Err() != nil {
			t.Fatalf("no new backup of schedule %s within %s (have %v)", name, timeout, seen)
		}
		require.NoError(t, err)
		for _, b := range list {
			if !slices.Contains(seen, b.Name) {
				return b
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// finishScheduleBackups waits until every backup of schedule name has
// finished and returns their names.
func finishScheduleBackups(t *testing.T, ctx context.Context, a *cluster, name string) []string {
	t.Helper()
	list, err := a.velero.ScheduleBackups(ctx, name)
	require.NoError(t, err)
	var names []string
	for _, b := range list {
		done, err := a.velero.WaitBackup(ctx, b.Name, backup.WaitOptions{})
		require.NoError(t, err)
		require.EqualValues(t, "Completed", done.Status.Phase)
		names = append(names, b.Name)
	}
	return names
}
