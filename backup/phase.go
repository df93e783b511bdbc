package backup

import velerov1 "github.com/vmware-tanzu/velero/pkg/apis/velero/v1"

// BackupTerminal reports whether a backup phase is final: Completed,
// PartiallyFailed, Failed or FailedValidation. Every other phase (New or
// empty, Queued, ReadyToStart, InProgress, WaitingForPluginOperations…,
// Finalizing…, Deleting) is in flight.
func BackupTerminal(p velerov1.BackupPhase) bool {
	switch p {
	case velerov1.BackupPhaseCompleted, velerov1.BackupPhasePartiallyFailed,
		velerov1.BackupPhaseFailed, velerov1.BackupPhaseFailedValidation:
		return true
	}
	return false
}

// backupUsable reports whether a backup in phase p can be restored from:
// Completed or PartiallyFailed (check its results for the items that
// failed).
func backupUsable(p velerov1.BackupPhase) bool {
	return p == velerov1.BackupPhaseCompleted || p == velerov1.BackupPhasePartiallyFailed
}

// restoreTerminal reports whether a restore phase is final: Completed,
// PartiallyFailed, Failed or FailedValidation.
func restoreTerminal(p velerov1.RestorePhase) bool {
	switch p {
	case velerov1.RestorePhaseCompleted, velerov1.RestorePhasePartiallyFailed,
		velerov1.RestorePhaseFailed, velerov1.RestorePhaseFailedValidation:
		return true
	}
	return false
}

// backupPhase treats the empty phase as New.
func backupPhase(b *velerov1.Backup) velerov1.BackupPhase {
	if b.Status.Phase == "" {
		return velerov1.BackupPhaseNew
	}
	return b.Status.Phase
}

func restorePhase(r *velerov1.Restore) velerov1.RestorePhase {
	if r.Status.Phase == "" {
		return velerov1.RestorePhaseNew
	}
	return r.Status.Phase
}

// backupResult turns a terminal backup into nil (Completed) or a
// *PhaseError.
func backupResult(b *velerov1.Backup) error {
	if b.Status.Phase == velerov1.BackupPhaseCompleted {
		return nil
	}
	return &PhaseError{Kind: "Backup", Name: b.Name, Phase: string(b.Status.Phase),
		ValidationErrors: b.Status.ValidationErrors, FailureReason: b.Status.FailureReason,
		Errors: b.Status.Errors, Warnings: b.Status.Warnings}
}

func restoreResult(r *velerov1.Restore) error {
	if r.Status.Phase == velerov1.RestorePhaseCompleted {
		return nil
	}
	return &PhaseError{Kind: "Restore", Name: r.Name, Phase: string(r.Status.Phase),
		ValidationErrors: r.Status.ValidationErrors, FailureReason: r.Status.FailureReason,
		Errors: r.Status.Errors, Warnings: r.Status.Warnings}
}
