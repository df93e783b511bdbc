// Package etcdrelocate moves one replica of a Cozystack tenant etcd to
// another node without losing quorum or data.
//
// # The flow
//
// A relocation is first a plan: a plain value that lists every step with
// its precondition, its check and the fault tolerance it leaves. Print it
// for a dry run, inspect it, then hand it to the executor:
//
//	r, err := etcdrelocate.NewForConfig(restConfig, etcdrelocate.Config{Logger: log})
//	plan, err := r.Plan(ctx, etcdrelocate.Request{
//		Namespace: "tenant-demo", Member: "etcd-1", TargetNode: "node-c",
//	})
//	fmt.Print(plan)                  // dry run: every step, its precondition and check
//	res, err := r.Execute(ctx, plan) // progress through Config.Progress
//	fmt.Print(res.Verification)
//
// Relocator.Plan observes the cluster (Observe) and calls PlanFor, which
// makes the plan from a State without I/O; Preflight runs the same checks
// alone. Config holds the Kubernetes clients (Kube, Dynamic) and how etcd
// is reached (TLS, Dial, Endpoints); NewForConfig builds the clients from a
// rest.Config. From outside the cluster network set Config.Dial to
// PortForwardDialer.
//
// Execute is resumable: every step works out from etcd and Kubernetes
// whether its work is already done, and the run records where it is in a
// checkpoint ConfigMap <cluster>-relocate. A run interrupted anywhere — a
// cancelled context, a crashed process, a killed member — is resumed by
// planning and executing again, from any process: Plan returns the plan
// that resumes the recorded relocation.
//
// # One relocation at a time
//
// Exactly one executor acts on a tenant etcd at a time, whatever member or
// target it was asked for. Execute (and RestoreReplica) first takes the
// coordination.k8s.io/v1 Lease <cluster>-relocate in the tenant namespace
// and holds it, renewing it, until it returns. While another executor holds
// it, Execute changes nothing and returns a *LockedError (errors.Is
// ErrLocked) naming the holder and when its lease runs out; a holder that
// died is taken over once its lease has gone unrenewed for
// Config.LeaseDuration, or, when it was a process of this machine that is
// provably gone (kill -9, a crash), one call timeout (Timeouts.Call) after
// that is found. Every change to etcd or Kubernetes first checks
// that the lease is still held: a run that lost it stops with ErrLeaseLost
// and changes nothing more. A plan made before another run changed the
// cluster is refused with ErrPlanStale: plan again.
//
// # What is checked first
//
// Observe recognises the layout — the aenix operator's StatefulSet
// (etcd.aenix.io/v1alpha1, Cozystack ≤ v1.5), the Cozystack operator's
// EtcdMember objects (etcd-operator.cozystack.io/v1alpha2, v1.6+), or a
// v1alpha2 cluster migrated with the legacy names — and joins etcd's
// members to their pods by peer URL, never by name. Preflight refuses,
// listing every reason in a *PreflightError: fewer than 3 or an even
// number of voters; a voter down; a learner; disagreement on the cluster
// ID or the leader; an alarm; raft indexes apart; HashKV that differs; an
// etcd version with the learner promotion bug (ErrVersionHazard); an
// unusable target node or one that already runs a member; certificates
// that do not cover the member's name; a running defrag Job; a workload
// mid-rollout; a PodDisruptionBudget that allows no disruption; another
// relocation's checkpoint; the Lease held by another executor.
//
// # What the v1alpha2 operator must allow
//
// On the v1alpha2 layouts tenantkit deletes a member only while the
// cozystack etcd-operator is settled (OperatorState, refusals as
// *OperatorStateError): Available=True/QuorumHealthy, Degraded not True,
// Progressing=False/Reconciled, status.observed equal to the spec, no
// status.progressDeadline pending, status.readyMembers equal to the
// observed replicas and no EtcdMember being deleted. An operator in
// DeadlineExceeded, or below its target, would let the member's finalizer
// remove it and never add the replacement. The pin step waits until the
// operator has latched the pin into status.observed and reconciled: new
// members get their affinity from status.observed, not from the spec.
// Where the operator's member deletion guard (a ValidatingAdmissionPolicy)
// is installed, tenantkit detects it with a server-side dry-run delete and
// passes it deliberately: it annotates the member
// AnnotationAllowDeletion=true and deletes it with a UID precondition. It
// needs get, patch and delete on etcdmembers (and get and patch on
// etcdclusters for the pin) in the tenant namespace; an operator may
// instead name tenantkit's user in the chart's
// memberDeletionProtection.additionalAllowedUsers, and then nothing is
// annotated. A refusal after that is a *DeletionRefusedError. tenantkit
// changes the EtcdCluster's spec.affinity (pinned for the move, put back
// after) and, where the guard is installed, leaves the annotation on the
// deleted member only.
//
// # Guarantees
//
//   - Quorum is kept at every step, and one membership change at most is
//     in flight.
//   - No member votes before it has caught up: the new member joins as a
//     learner and is promoted once its applied index reaches the leader's
//     commit index.
//   - No acknowledged write is lost. In a 3-member cluster fault tolerance
//     is 0 from stopping the member to the promotion; a second failure in
//     that window stops writes until it recovers, but loses nothing.
//   - The data is never only on the voters: until the new member is
//     verified and a snapshot taken during the move has verified, the old
//     member's volume is kept (reclaim policy Retain).
//   - An ambiguous membership answer (a timeout after the request reached
//     etcd) is settled by reading MemberList again, never by guessing.
//   - A member that stops answering is waited for within
//     Options.StallBudget, then Execute stops with a *StalledError and
//     rolls nothing back.
//   - If the new member does not start or catch up in time, the learner is
//     removed again and Execute returns a *RolledBackError: the cluster
//     runs with one voter fewer and says so. Relocator.RestoreReplica
//     (shown first by PlanRestore) adds the replica back on a node of your
//     choice, resumably and under the same Lease.
//
// # Node maintenance
//
// An operator empties a node of tenant etcd members, across every tenant
// of the management cluster, in three calls:
//
//	report, err := r.ReportNode(ctx, "worker-2")       // what losing it now does to each tenant
//	plan, err := r.PlanEvacuation(ctx, "worker-2", etcdrelocate.EvacuationOptions{MaxParallel: 3})
//	fmt.Print(plan)                                    // dry run: member → target, wave by wave; refusals
//	rep, err := r.Evacuate(ctx, plan, progress)        // run again to resume
//
// ObserveFleet observes every tenant etcd (both layouts) and the nodes;
// NodeReportFor, PlanEvacuationFor and PlanSpreadFor decide from it
// without I/O. A NodeReport says, per tenant, where its members run, the
// fault tolerance without the node (negative: quorum lost), co-located
// members, and whether a plain kubectl drain is safe (only when every
// tenant was observed and keeps quorum). An evacuation plan moves each
// member to a Ready, uncordoned node that runs no member of its cluster,
// whose taints the pod tolerates and whose labels its node selector and
// required node affinity accept, preferring the zone with the fewest of the
// cluster's members, then the node running the fewest tenant etcd members;
// the same inputs give the same plan. A tenant that is degraded, cannot be
// observed, is mid-relocation from another node or has no eligible node is
// refused with its reasons. PlanSpreadFor moves a tenant's co-located
// members apart with the same machinery.
//
// What an evacuation guarantees:
//
//   - One evacuation of a node at a time: Evacuate holds the Lease
//     evacuate-<node> (EvacuationOptions.LeaseNamespace, kube-system by
//     default); another is refused with a *LockedError naming it.
//   - Each move is a single relocation, planned afresh from the cluster as
//     it is when its turn comes and executed under its cluster's Lease, with
//     every guarantee above: no tenant's fault tolerance goes below what
//     one relocation leaves (0 for 3 voters), never below 0. Two members of
//     one tenant never move at once; no two moves of a wave target one
//     node; at most MaxParallel run at once.
//   - A failed move does not stop the others unless StopOnFailure; the
//     EvacuationReport lists what moved, what was refused, and each failure
//     with the state it left and the command that resumes it.
//   - After kill -9 or Ctrl-C, the same call resumes: moves done are found
//     done, the relocation a checkpoint records is resumed, the rest run.
//   - The node is cordoned first (unless SkipCordon) and left cordoned.
//
// # Errors
//
// Preflight and PlanFor return a *PreflightError whose failures wrap the
// ErrX refusals (ErrTooFewVoters, ErrMemberDown, ErrLearnerPresent,
// ErrAlarm, ErrTargetHasReplica, ErrUnknownLayout, a *LockedError, ...).
// Execute returns a *LockedError when another executor holds the Lease, a
// *StepError naming the step that failed (the checkpoint stays; plan and
// execute again to resume; ErrLeaseLost, ErrPlanStale and *StalledError
// arrive this way), a *RolledBackError (errors.Is ErrRolledBack), or the
// context's error. RestoreReplica returns ErrNothingToRestore when no
// relocation rolled back. Waits that run out wrap ErrTimeout; quorum
// trouble wraps ErrQuorumAtRisk; membership that does not match the
// checkpoint wraps ErrUnexpectedMember; Verify wraps ErrVerify; something
// that could not be observed wraps ErrNotObserved and is never reported as
// a mismatch. A nil State or Plan, or a Relocator not made by New, is
// ErrInvalidArgument.
//
// The steps of each layout, why they come in that order, the Lease's
// fencing and the figures are in docs/etcdrelocate.md. Package
// etcdrelocatetest helps test code that relocates members.
package etcdrelocate
