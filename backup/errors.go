package backup

import (
	"errors"
	"fmt"
	"strings"

	velerov1 "github.com/vmware-tanzu/velero/pkg/apis/velero/v1"
)

// Sentinel errors. Branch on them with errors.Is; the typed errors below
// carry the details and unwrap to one of these.
var (
	// ErrInvalidConfig is returned for a configuration that cannot work,
	// such as a Store without a bucket.
	ErrInvalidConfig = errors.New("backup: invalid config")
	// ErrSecretNotFound is returned when neither the Bucket credentials
	// Secret nor the COSI BucketInfo Secret exists.
	ErrSecretNotFound = errors.New("backup: bucket secret not found")
	// ErrInvalidSecret is returned for a Bucket Secret with a missing or
	// malformed key; the *SecretError says which.
	ErrInvalidSecret = errors.New("backup: invalid bucket secret")
	// ErrInvalidPrefix is returned for a backup storage location prefix
	// that Velero would reject or that shares its top level with foreign
	// data (which makes the location Unavailable).
	ErrInvalidPrefix = errors.New("backup: invalid location prefix")
	// ErrNotFound is returned when a backup, or one of its files, does not
	// exist.
	ErrNotFound = errors.New("backup: not found")
	// ErrInvalidKey is returned for an object key or prefix that would
	// leave a directory store's root (see KeyError).
	ErrInvalidKey = errors.New("backup: invalid object key")
	// ErrMalformed is returned when a file Velero wrote (velero-backup.json,
	// the resource list, the results) cannot be decoded.
	ErrMalformed = errors.New("backup: malformed file")
	// ErrCorrupt is returned by Verify when a backup in the bucket is
	// incomplete or damaged; the *VerifyError holds the report.
	ErrCorrupt = errors.New("backup: backup is corrupt")
	// ErrLocationUnavailable is returned when a backup storage location is
	// not Available.
	ErrLocationUnavailable = errors.New("backup: location unavailable")
	// ErrFailedValidation is returned when Velero refused a Backup or
	// Restore (phase FailedValidation); the *PhaseError lists the reasons.
	ErrFailedValidation = errors.New("backup: failed validation")
	// ErrFailed is returned when a Backup or Restore ended Failed.
	ErrFailed = errors.New("backup: failed")
	// ErrPartiallyFailed is returned when a Backup or Restore ended
	// PartiallyFailed: the result is usable but some items had errors.
	ErrPartiallyFailed = errors.New("backup: partially failed")
	// ErrDeleteFailed is returned when Velero processed a
	// DeleteBackupRequest with errors.
	ErrDeleteFailed = errors.New("backup: delete failed")
	// ErrInvalidPolicy is returned for a retention policy that keeps
	// nothing.
	ErrInvalidPolicy = errors.New("backup: invalid retention policy")
)

// SecretError reports which Secret and key of a Bucket's credentials is
// missing or malformed. It never includes key values.
type SecretError struct {
	// Secret is the Secret's name.
	Secret string
	// Key is the data key at fault ("" when the whole Secret is at fault).
	Key string
	// Reason says what is wrong, for example "missing" or "empty".
	Reason string
}

func (e *SecretError) Error() string {
	if e.Key == "" {
		return fmt.Sprintf("backup: secret %s: %s", e.Secret, e.Reason)
	}
	return fmt.Sprintf("backup: secret %s: key %s: %s", e.Secret, e.Key, e.Reason)
}

// Unwrap returns ErrInvalidSecret.
func (e *SecretError) Unwrap() error { return ErrInvalidSecret }

// PrefixError reports a location prefix that was refused.
type PrefixError struct {
	// Prefix is the prefix as given.
	Prefix string
	// Foreign lists top-level folders under the prefix that are not
	// Velero's own (empty when the prefix itself is malformed).
	Foreign []string
	// Reason says what is wrong.
	Reason string
}

func (e *PrefixError) Error() string {
	if len(e.Foreign) > 0 {
		return fmt.Sprintf("backup: prefix %q: %s: %s", e.Prefix, e.Reason, strings.Join(e.Foreign, ", "))
	}
	return fmt.Sprintf("backup: prefix %q: %s", e.Prefix, e.Reason)
}

// Unwrap returns ErrInvalidPrefix.
func (e *PrefixError) Unwrap() error { return ErrInvalidPrefix }

// DecodeError reports a file that could not be decoded.
type DecodeError struct {
	// File is the object key or file name.
	File string
	// Err is the underlying decoding error.
	Err error
}

func (e *DecodeError) Error() string { return fmt.Sprintf("backup: decode %s: %v", e.File, e.Err) }

// Unwrap returns ErrMalformed and the decoding error.
func (e *DecodeError) Unwrap() []error { return []error{ErrMalformed, e.Err} }

// PhaseError reports a Backup or Restore that ended in a phase other than
// Completed.
type PhaseError struct {
	// Kind is "Backup" or "Restore".
	Kind string
	// Name is the object's name.
	Name string
	// Phase is the terminal phase.
	Phase string
	// ValidationErrors are Velero's reasons for FailedValidation.
	ValidationErrors []string
	// FailureReason is Velero's reason for Failed.
	FailureReason string
	// Errors and Warnings are the counts Velero reported.
	Errors, Warnings int
}

func (e *PhaseError) Error() string {
	msg := fmt.Sprintf("backup: %s %s: %s", strings.ToLower(e.Kind), e.Name, e.Phase)
	switch {
	case len(e.ValidationErrors) > 0:
		msg += ": " + strings.Join(e.ValidationErrors, "; ")
	case e.FailureReason != "":
		msg += ": " + e.FailureReason
	case e.Errors > 0:
		msg += fmt.Sprintf(" (%d errors, %d warnings)", e.Errors, e.Warnings)
	}
	return msg
}

// Unwrap returns ErrFailedValidation, ErrFailed or ErrPartiallyFailed.
func (e *PhaseError) Unwrap() error {
	switch e.Phase {
	case string(velerov1.BackupPhaseFailedValidation):
		return ErrFailedValidation
	case string(velerov1.BackupPhasePartiallyFailed):
		return ErrPartiallyFailed
	default:
		return ErrFailed
	}
}

// LocationError reports a backup storage location that is not Available.
type LocationError struct {
	// Name is the BackupStorageLocation's name.
	Name string
	// Phase is its last phase ("" if Velero never validated it).
	Phase string
	// Message is Velero's last validation message.
	Message string
}

func (e *LocationError) Error() string {
	phase := e.Phase
	if phase == "" {
		phase = "not validated yet"
	}
	if e.Message != "" {
		return fmt.Sprintf("backup: location %s: %s: %s", e.Name, phase, e.Message)
	}
	return fmt.Sprintf("backup: location %s: %s", e.Name, phase)
}

// Unwrap returns ErrLocationUnavailable.
func (e *LocationError) Unwrap() error { return ErrLocationUnavailable }

// DeleteError reports a DeleteBackupRequest that Velero processed with
// errors.
type DeleteError struct {
	// Backup is the backup's name.
	Backup string
	// Request is the DeleteBackupRequest's name.
	Request string
	// Errors are Velero's messages.
	Errors []string
}

func (e *DeleteError) Error() string {
	return fmt.Sprintf("backup: delete %s (request %s): %s", e.Backup, e.Request, strings.Join(e.Errors, "; "))
}

// Unwrap returns ErrDeleteFailed.
func (e *DeleteError) Unwrap() error { return ErrDeleteFailed }

// VerifyError is returned by Verify for a backup with problems; Report
// lists them all.
type VerifyError struct {
	// Report is the full verification report.
	Report *VerifyReport
}

func (e *VerifyError) Error() string {
	var parts []string
	for _, p := range e.Report.Problems {
		parts = append(parts, p.String())
	}
	if n := e.Report.ProblemsLeftOut; n > 0 {
		parts = append(parts, fmt.Sprintf("and %d more problems", n))
	}
	return fmt.Sprintf("backup: verify %s: %s", e.Report.Backup, strings.Join(parts, "; "))
}

// Unwrap returns ErrCorrupt and each Problem, so that errors.As finds
// the first Problem.
func (e *VerifyError) Unwrap() []error {
	errs := []error{ErrCorrupt}
	for _, p := range e.Report.Problems {
		errs = append(errs, p)
	}
	return errs
}
