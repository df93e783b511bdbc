package etcdrelocate

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Preflight refusals. Preflight returns them inside a *PreflightError, which
// lists every failed check; errors.Is finds each one.
var (
	// ErrUnknownLayout is returned when the namespace holds neither an aenix
	// StatefulSet layout nor an etcd-operator.cozystack.io/v1alpha2 cluster.
	ErrUnknownLayout = errors.New("etcdrelocate: unknown etcd layout")
	// ErrMemberNotFound is returned when the member to move matches no pod,
	// EtcdMember, member name or member ID of the cluster.
	ErrMemberNotFound = errors.New("etcdrelocate: member not found")
	// ErrTooFewVoters is returned for a cluster with fewer than 3 voters:
	// removing one of 2 voters leaves no fault tolerance at all.
	ErrTooFewVoters = errors.New("etcdrelocate: fewer than 3 voting members")
	// ErrEvenVoters is returned for an even number of voters, where removing
	// one first is the only order and the remaining cluster has no spare.
	ErrEvenVoters = errors.New("etcdrelocate: even number of voting members")
	// ErrMemberDown is returned when a voter has never started or does not
	// answer Status.
	ErrMemberDown = errors.New("etcdrelocate: member down")
	// ErrLearnerPresent is returned when the cluster already has a learner:
	// etcd allows one, and a learner that is not ours must not be touched.
	ErrLearnerPresent = errors.New("etcdrelocate: learner present")
	// ErrClusterIDMismatch is returned when members report different
	// cluster IDs (split brain).
	ErrClusterIDMismatch = errors.New("etcdrelocate: members disagree on the cluster ID")
	// ErrNoLeader is returned when members report no leader, or different
	// leaders.
	ErrNoLeader = errors.New("etcdrelocate: no agreed leader")
	// ErrAlarm is returned while an alarm (NOSPACE, CORRUPT) is raised.
	ErrAlarm = errors.New("etcdrelocate: alarm raised")
	// ErrIndexLag is returned when a voter's applied raft index trails the
	// others by more than the allowed lag.
	ErrIndexLag = errors.New("etcdrelocate: raft indexes not converged")
	// ErrHashMismatch is returned when voters' HashKV differ at a common
	// revision. A hash that could not be taken is ErrNotObserved instead.
	ErrHashMismatch = errors.New("etcdrelocate: HashKV differs between members")
	// ErrNotObserved is returned when something a check needs could not
	// be observed (a voter that answers Status but not HashKV, a revision
	// compacted under every attempt): the check was not made, which is
	// neither a pass nor a mismatch. Observe again.
	ErrNotObserved = errors.New("etcdrelocate: not observed")
	// ErrVersionHazard is returned for etcd 3.5.1–3.5.19, whose learner
	// promotion is persisted to the v2 store only (etcd #19557), unless
	// Options.SkipVersionHazard is set.
	ErrVersionHazard = errors.New("etcdrelocate: etcd version with the learner promotion bug")
	// ErrTargetNode is returned when the target node is missing, not Ready
	// or unschedulable, or is the member's own node.
	ErrTargetNode = errors.New("etcdrelocate: target node unusable")
	// ErrTargetHasReplica is returned when the target node already runs a
	// member of the same cluster.
	ErrTargetHasReplica = errors.New("etcdrelocate: target node already holds a replica")
	// ErrCertSAN is returned when the serving or peer certificate does not
	// cover the member's DNS name.
	ErrCertSAN = errors.New("etcdrelocate: certificate does not cover the member's name")
	// ErrDefragRunning is returned while a defragmentation Job runs.
	ErrDefragRunning = errors.New("etcdrelocate: defrag job running")
	// ErrRolloutInProgress is returned while the StatefulSet rolls out a new
	// revision or is not fully ready, or while the cluster's
	// ETCD_INITIAL_CLUSTER_STATE is not "existing".
	ErrRolloutInProgress = errors.New("etcdrelocate: workload not settled")
	// ErrDisruptionNotAllowed is returned when the cluster's
	// PodDisruptionBudget allows no disruption right now.
	ErrDisruptionNotAllowed = errors.New("etcdrelocate: PodDisruptionBudget allows no disruption")
	// ErrRelocationInProgress is returned when a checkpoint of another
	// relocation exists in the namespace.
	ErrRelocationInProgress = errors.New("etcdrelocate: another relocation is in progress")
)

// Errors of the executor.
var (
	// ErrQuorumAtRisk is returned when a step would proceed while the
	// remaining voters are not all healthy, or when quorum was lost during a
	// step and did not come back within the bound. Nothing further is
	// changed; re-running resumes from the checkpoint.
	ErrQuorumAtRisk = errors.New("etcdrelocate: quorum at risk")
	// ErrRolledBack is returned (inside a *RolledBackError) when the new
	// member did not start or catch up in time and the learner was removed
	// again: the cluster runs with one voter fewer.
	ErrRolledBack = errors.New("etcdrelocate: rolled back to one voter fewer")
	// ErrTimeout is returned when a wait ran past its bound.
	ErrTimeout = errors.New("etcdrelocate: timed out")
	// ErrUnexpectedMember is returned when etcd's membership does not match
	// what the checkpoint recorded (for example the old member ID is back,
	// or a foreign learner appeared).
	ErrUnexpectedMember = errors.New("etcdrelocate: unexpected membership")
	// ErrVerify is returned by Verify when a post-condition does not hold.
	ErrVerify = errors.New("etcdrelocate: verification failed")
	// ErrInvalidCheckpoint is returned for a checkpoint that cannot be
	// decoded or does not validate.
	ErrInvalidCheckpoint = errors.New("etcdrelocate: invalid checkpoint")
	// ErrInvalidConfig is returned by New and Plan for unusable input.
	ErrInvalidConfig = errors.New("etcdrelocate: invalid config")
	// ErrInvalidArgument is returned for a nil argument where a value is
	// needed (a nil *State to PlanFor, Preflight or RestorePlanFor, a nil
	// *Plan to Execute or Verify, a nil *Checkpoint to Encode, a nil
	// *rest.Config to PortForwardDialer) and for a Relocator not made by
	// New.
	ErrInvalidArgument = errors.New("etcdrelocate: invalid argument")
	// ErrLocked is returned (inside a *LockedError) when another executor
	// holds the cluster's relocation Lease: one executor acts on a tenant
	// etcd at a time, whatever member or target it was asked for.
	ErrLocked = errors.New("etcdrelocate: another executor holds the relocation lease")
	// ErrLeaseLost is returned when a run's Lease was taken over, deleted
	// or could not be renewed before it expired, or its checkpoint was
	// written by someone else: the run stopped before its next change to
	// etcd or Kubernetes.
	ErrLeaseLost = errors.New("etcdrelocate: relocation lease lost")
	// ErrPlanStale is returned when a plan no longer matches the cluster
	// once the executor holds the lease (another run moved the member, or
	// finished or cleared the relocation the plan resumes). Plan again.
	ErrPlanStale = errors.New("etcdrelocate: plan is stale")
	// ErrNothingToRestore is returned by RestoreReplica when no relocation
	// rolled back in the namespace: no replica is missing by its record.
	ErrNothingToRestore = errors.New("etcdrelocate: no rolled-back relocation to restore")
)

// errNil returns an error wrapping ErrInvalidArgument for a nil what.
func errNil(what string) error { return fmt.Errorf("%w: nil %s", ErrInvalidArgument, what) }

// LockedError reports that another executor holds the cluster's
// relocation Lease. It unwraps to ErrLocked.
type LockedError struct {
	// Namespace and Lease name the coordination.k8s.io/v1 Lease.
	Namespace, Lease string
	// Holder is the holder's identity (Config.Identity, process ID and a
	// random suffix).
	Holder string
	// Expires is when the holder's lease runs out unless renewed, by the
	// holder's clock (its last renewal plus the lease duration). A holder
	// that died is taken over once the lease has not been renewed for a
	// full duration as seen by the next executor.
	Expires time.Time
}

func (e *LockedError) Error() string {
	return fmt.Sprintf("etcdrelocate: locked: executor %s holds lease %s/%s until %s (renewed while it runs); try again after it",
		e.Holder, e.Namespace, e.Lease, e.Expires.UTC().Format(time.RFC3339))
}

// Unwrap returns ErrLocked.
func (e *LockedError) Unwrap() error { return ErrLocked }

// Failure is one failed preflight check.
type Failure struct {
	// Check names the check, for example "voters" or "target-node".
	Check string
	// Err says what failed; it wraps one of the ErrX sentinels.
	Err error
}

// PreflightError lists every preflight check that failed.
type PreflightError struct {
	Failures []Failure
}

func (e *PreflightError) Error() string {
	msgs := make([]string, 0, len(e.Failures))
	for _, f := range e.Failures {
		msgs = append(msgs, f.Check+": "+f.Err.Error())
	}
	return "etcdrelocate: preflight refused: " + strings.Join(msgs, "; ")
}

// Unwrap returns the failures' errors, so that errors.Is finds each
// sentinel.
func (e *PreflightError) Unwrap() []error {
	errs := make([]error, 0, len(e.Failures))
	for _, f := range e.Failures {
		errs = append(errs, f.Err)
	}
	return errs
}

// StepError is returned by Execute when a step fails; the checkpoint stays in
// the cluster and a re-run resumes at that step.
type StepError struct {
	// Step is the step that failed.
	Step StepKind
	// Err is the cause.
	Err error
}

func (e *StepError) Error() string { return fmt.Sprintf("etcdrelocate: step %s: %v", e.Step, e.Err) }

// Unwrap returns the cause.
func (e *StepError) Unwrap() error { return e.Err }

// RolledBackError reports a relocation that was rolled back: the old member
// was removed, the new one never became a voter, and its learner was removed
// again. The cluster keeps Voters voters, one fewer than before. The old
// member is never re-added: its data is gone. Restore the missing replica
// with Relocator.RestoreReplica on a node of your choice (Restore says how);
// the old volume and the snapshot keep the data meanwhile.
type RolledBackError struct {
	// Namespace and Cluster name the tenant etcd.
	Namespace, Cluster string
	// Step is the step that gave up.
	Step StepKind
	// Voters is the number of voters left.
	Voters int
	// RemovedID is the ID of the old member, LearnerID that of the removed
	// learner (0 if none was added).
	RemovedID, LearnerID uint64
	// SnapshotPath is the snapshot taken during the move, if any.
	SnapshotPath string
	// Volume is the old member's volume, kept with reclaim policy Retain
	// ("" if none was kept): it still holds the old member's data.
	Volume string
	// Cause is why the step gave up.
	Cause error
}

func (e *RolledBackError) Error() string {
	return fmt.Sprintf("etcdrelocate: ROLLED BACK at step %s: %v; the cluster runs with %d voters (old member %x removed, learner %x removed); snapshot: %s; old volume kept: %s; restore the replica: %s",
		e.Step, e.Cause, e.Voters, e.RemovedID, e.LearnerID, orNone(e.SnapshotPath), orNone(e.Volume), e.Restore())
}

// Restore returns the one call that restores the missing replica, and the
// example program's command that makes it; NODE is the node of your
// choice.
func (e *RolledBackError) Restore() string {
	return restoreCommand(e.Namespace, e.Cluster)
}

// restoreCommand returns the call (and the example program's command) that
// restores the replica a rolled-back relocation in namespace/cluster left
// missing; NODE is the node of your choice.
func restoreCommand(namespace, cluster string) string {
	if cluster == "" {
		cluster = DefaultCluster
	}
	return fmt.Sprintf("Relocator.RestoreReplica(ctx, RestoreRequest{Namespace: %q, Cluster: %q, Node: NODE}), or: etcd-relocate --kubeconfig KUBECONFIG --namespace %s --cluster %s --restore-to-node NODE",
		namespace, cluster, namespace, cluster)
}

// Unwrap returns ErrRolledBack and the cause.
func (e *RolledBackError) Unwrap() []error { return []error{ErrRolledBack, e.Cause} }

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
