package backup_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	velerov1 "github.com/vmware-tanzu/velero/pkg/apis/velero/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cozystack/tenantkit/backup"
)

func fakeBackup(name string, at time.Time, phase velerov1.BackupPhase) velerov1.Backup {
	t := metav1.NewTime(at)
	return velerov1.Backup{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: velerov1.BackupStatus{Phase: phase, CompletionTimestamp: &t}}
}

// dailyBackups returns one Completed backup a day at 02:00 UTC for n days
// before 2026-03-31, newest first.
func dailyBackups(n int) []velerov1.Backup {
	var out []velerov1.Backup
	end := time.Date(2026, 3, 31, 2, 0, 0, 0, time.UTC)
	for i := 0; i < n; i++ {
		at := end.AddDate(0, 0, -i)
		out = append(out, fakeBackup("daily-"+at.Format("20060102"), at, velerov1.BackupPhaseCompleted))
	}
	return out
}

func TestPlanRetention(t *testing.T) {
	tests := []struct {
		name       string
		backups    []velerov1.Backup
		policy     backup.Policy
		keep, drop int
		kept       []string
	}{
		{"keep last 3", dailyBackups(10), backup.Policy{KeepLast: 3}, 3, 7, []string{"daily-20260331", "daily-20260330", "daily-20260329"}},
		{"daily 7 weekly 4 monthly 3", dailyBackups(120), backup.Policy{KeepDaily: 7, KeepWeekly: 4, KeepMonthly: 3}, 11, 109, nil},
		{"more rules than backups", dailyBackups(2), backup.Policy{KeepLast: 5, KeepMonthly: 12}, 2, 0, nil},
		{"in-flight and failed are kept, not counted", append(dailyBackups(3),
			fakeBackup("running", time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC), velerov1.BackupPhaseInProgress),
			fakeBackup("broken", time.Date(2026, 4, 1, 1, 0, 0, 0, time.UTC), velerov1.BackupPhaseFailed)),
			backup.Policy{KeepLast: 1}, 3, 2, []string{"broken", "running", "daily-20260331"}},
		{"failed deleted on request", append(dailyBackups(1),
			fakeBackup("broken", time.Date(2026, 4, 1, 1, 0, 0, 0, time.UTC), velerov1.BackupPhaseFailedValidation)),
			backup.Policy{KeepLast: 1, DeleteFailed: true}, 1, 1, []string{"daily-20260331"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan, err := backup.PlanRetention(tt.backups, tt.policy)
			require.NoError(t, err)
			require.Len(t, plan.Keep, tt.keep, plan.String())
			require.Len(t, plan.Delete, tt.drop, plan.String())
			if tt.kept != nil {
				require.Equal(t, tt.kept, names(plan.Keep))
			}
			for _, d := range append(plan.Keep, plan.Delete...) {
				require.NotEmpty(t, d.Reasons, d.Backup)
			}
		})
	}
}

func TestPlanRetention_gfs(t *testing.T) {
	plan, err := backup.PlanRetention(dailyBackups(120), backup.Policy{KeepDaily: 7, KeepWeekly: 4, KeepMonthly: 3})
	require.NoError(t, err)
	reasons := map[string]string{}
	for _, d := range plan.Keep {
		reasons[d.Backup] = fmt.Sprint(d.Reasons)
	}
	require.Equal(t, "[daily 1 (2026-03-31) weekly 1 (2026-W14) monthly 1 (2026-03)]", reasons["daily-20260331"])
	require.Equal(t, "[daily 3 (2026-03-29) weekly 2 (2026-W13)]", reasons["daily-20260329"], "Sunday closes ISO week 13")
	require.Equal(t, "[weekly 3 (2026-W12)]", reasons["daily-20260322"])
	require.Equal(t, "[monthly 2 (2026-02)]", reasons["daily-20260228"])
	require.Equal(t, "[monthly 3 (2026-01)]", reasons["daily-20260131"])
}

func TestPlanRetention_refusesEmptyPolicy(t *testing.T) {
	_, err := backup.PlanRetention(dailyBackups(3), backup.Policy{})
	require.ErrorIs(t, err, backup.ErrInvalidPolicy)
	_, err = backup.PlanRetention(dailyBackups(3), backup.Policy{KeepLast: -1, KeepDaily: 2})
	require.ErrorIs(t, err, backup.ErrInvalidPolicy)
}

func TestBackupTerminal(t *testing.T) {
	terminal := map[velerov1.BackupPhase]bool{
		velerov1.BackupPhaseCompleted: true, velerov1.BackupPhasePartiallyFailed: true,
		velerov1.BackupPhaseFailed: true, velerov1.BackupPhaseFailedValidation: true,
	}
	for _, p := range []velerov1.BackupPhase{"", velerov1.BackupPhaseNew, velerov1.BackupPhaseQueued, velerov1.BackupPhaseReadyToStart,
		velerov1.BackupPhaseInProgress, velerov1.BackupPhaseWaitingForPluginOperations, velerov1.BackupPhaseWaitingForPluginOperationsPartiallyFailed,
		velerov1.BackupPhaseFinalizing, velerov1.BackupPhaseFinalizingPartiallyFailed, velerov1.BackupPhaseCompleted,
		velerov1.BackupPhasePartiallyFailed, velerov1.BackupPhaseFailed, velerov1.BackupPhaseFailedValidation, velerov1.BackupPhaseDeleting} {
		require.Equal(t, terminal[p], backup.BackupTerminal(p), "phase %q", p)
	}
}
