package backup

import (
	"errors"
	"fmt"

	velerov1 "github.com/vmware-tanzu/velero/pkg/apis/velero/v1"
)

var (
	// ErrClusterUnreadable is returned by PlanRestore and CheckRestore when
	// the tenant cluster cannot be read (discovery or a list refused or
	// unreachable); the *ClusterError says what was being read.
	ErrClusterUnreadable = errors.New("backup: cluster unreadable")
	// ErrInvalidRestoreSpec is returned for a restore spec Velero would
	// refuse (FailedValidation) or cannot apply; the *RestoreSpecError
	// names the field.
	ErrInvalidRestoreSpec = errors.New("backup: invalid restore spec")
)

// ClusterError reports a failure to read the tenant cluster.
type ClusterError struct {
	// Op says what was being read ("discovery", "list", "get").
	Op string
	// Resource is the group-resource ("" for discovery).
	Resource string
	// Namespace is the namespace read ("" for all or cluster scope).
	Namespace string
	// Err is the client's error.
	Err error
}

func (e *ClusterError) Error() string {
	what := e.Op
	if e.Resource != "" {
		what += " " + e.Resource
	}
	if e.Namespace != "" {
		what += " in " + e.Namespace
	}
	return fmt.Sprintf("backup: read cluster: %s: %v", what, e.Err)
}

// Unwrap returns ErrClusterUnreadable and the client's error.
func (e *ClusterError) Unwrap() []error { return []error{ErrClusterUnreadable, e.Err} }

// RestoreSpecError reports a restore spec field that cannot be used.
type RestoreSpecError struct {
	// Field is the RestoreSpec field at fault, as in JSON.
	Field string
	// Err says what is wrong.
	Err error
}

func (e *RestoreSpecError) Error() string {
	return fmt.Sprintf("backup: restore spec: %s: %v", e.Field, e.Err)
}

// Unwrap returns ErrInvalidRestoreSpec and the cause.
func (e *RestoreSpecError) Unwrap() []error { return []error{ErrInvalidRestoreSpec, e.Err} }

var errNoTarget = errors.New("RestoreTarget needs Dynamic and Discovery (NewRestoreTarget)")

func errNonRestorable(r string) error {
	return fmt.Errorf("%s is never restored by Velero (the restore would fail validation)", r)
}

func errPolicy(p velerov1.PolicyType) error {
	return fmt.Errorf("%q is not none or update", p)
}
