// Package etcdrelocate moves one replica of a Cozystack tenant etcd to
// another node without losing quorum or data. The relocation is planned as
// a value you can print (a dry run), then executed step by step; every step
// works out from etcd and Kubernetes whether its work is already done, so a
// run interrupted anywhere — a cancelled context, a crashed process, a
// killed member — is resumed by running it again.
//
//	r, err := etcdrelocate.NewForConfig(restConfig, etcdrelocate.Config{Logger: log})
//	plan, err := r.Plan(ctx, etcdrelocate.Request{
//		Namespace: "tenant-demo", Member: "etcd-1", TargetNode: "node-c",
//	})
//	fmt.Print(plan)                       // dry run: every step, its precondition and check
//	res, err := r.Execute(ctx, plan)      // progress through Config.Progress
//	fmt.Print(res.Verification)
//
// Config holds the Kubernetes clients (Kube, Dynamic) and how etcd is
// reached (TLS, Dial, Endpoints); NewForConfig builds the clients from a
// rest.Config. PlanFor makes the plan from a State observed earlier (or
// built by hand) without I/O; Relocator.Plan observes first.
//
// # Observe
//
// Observe recognises the layout: the aenix operator's StatefulSet
// (etcd.aenix.io/v1alpha1, Cozystack ≤ v1.5: pods etcd-N, claims
// data-etcd-N, Service etcd-headless), the Cozystack operator's EtcdMember
// objects (etcd-operator.cozystack.io/v1alpha2, v1.6+), or a v1alpha2
// cluster migrated with the legacy names. It reads the members through etcd
// client v3 (linearizable MemberList, Status and HashKV on every member's
// own endpoint, AlarmList) with the client certificate of etcd-client-tls
// and the CA of etcd-ca-tls, reads pods, claims, volumes, nodes, the PDB,
// the certificates and defrag Jobs through client-go, and joins the two by
// peer URL — never by name: etcd names are empty until a member starts and
// need not be unique. From inside the cluster network the members' DNS
// names are dialled directly; from outside set Config.Dial to
// PortForwardDialer (or ResolverDialer).
//
// # Preflight
//
// Preflight refuses, listing every reason in a *PreflightError: fewer than 3
// or an even number of voters; a voter that never started or does not
// answer; a learner; members that disagree on the cluster ID or the leader;
// an alarm (NOSPACE, CORRUPT); applied raft indexes apart; HashKV that
// differs at a common revision; etcd 3.5.1–3.5.19, whose learner promotion
// is saved in the v2 store only (etcd #19557; Options.SkipVersionHazard
// turns this into a warning); a target node that is missing, not Ready,
// cordoned, the member's own, or already running a member of the cluster;
// certificates whose SANs do not cover the member's DNS name; a running
// defrag Job; a StatefulSet mid-rollout or whose etcd-cluster-state still
// says "new"; a PodDisruptionBudget that allows no disruption; the
// checkpoint of another relocation; and the relocation Lease held by
// another executor (a *LockedError naming it).
//
// # One executor at a time
//
// Exactly one executor acts on a tenant etcd at a time, whatever member or
// target it was asked for. Execute (and RestoreReplica) first takes the
// coordination.k8s.io/v1 Lease <cluster>-relocate in the tenant namespace,
// by Create, or by an Update conditional on the resourceVersion it read
// (compare-and-swap). While another executor holds it, Execute changes
// nothing and returns a *LockedError (errors.Is ErrLocked) naming the
// holder (Config.Identity, the process ID and a random suffix) and when
// its lease runs out. The holder renews it every third of
// Config.LeaseDuration (default 30 s) and releases it when it returns,
// whether it finished, stopped or rolled back. A holder that died is taken
// over only once its lease has gone unrenewed for a full duration as
// measured on the taker's own monotonic clock (clocks are never compared),
// and the run then resumes from the checkpoint as before.
//
// Fencing: every call that changes etcd (member add, promote, remove,
// MoveLeader) or Kubernetes (create, update, patch, delete) first checks
// that the run's lease is still valid — until the start of its last
// successful renewal plus two thirds of the duration; the remaining third
// covers a call that began just before the check (Timeouts.Call is at most
// a third). Past it, the run renews synchronously, and that renewal succeeds
// only if nobody took the lease meanwhile. Every step also re-reads the
// Lease first. A run that lost its lease stops before it touches etcd or
// Kubernetes again and returns an error wrapping ErrLeaseLost; it never
// rolls back. Checkpoint writes are conditional on the resourceVersion the
// run read or wrote last, so a checkpoint changed by anyone else stops the
// run too. A plan made before another run changed the cluster (the member
// moved, a checkpoint appeared or went) is refused with ErrPlanStale: plan
// again.
//
// # The algorithm (StatefulSet layout)
//
// The pod keeps its name, so the member keeps its peer URL
// https://etcd-N.etcd-headless.<ns>.svc:2380, and the only workable order is
// old member out first (a second member with the same URL or pod name
// cannot exist):
//
//  1. checkpoint: record the member's ID, peer URL, pod and claim UIDs and
//     the target in ConfigMap <cluster>-relocate (while the run holds the
//     Lease of that name);
//  2. move-leader: if the member leads, MoveLeader (on a client of the
//     leader only) to the most up-to-date voter;
//  3. snapshot: start streaming a snapshot from a healthy follower other
//     than the member; it streams while the member moves, and its sha256
//     trailer is checked before the old data may go (release-volume);
//  4. cordon the source node, unless it was cordoned already;
//  5. stop-member: with every other voter healthy, set the old volume's
//     reclaim policy to Retain (so its data outlives the claim), put a hold
//     finalizer on the claim and delete it, then delete the pod (by UID).
//     etcd stops gracefully, so clients move to the other members without a
//     failed request. A pod cannot start on a claim that is being deleted,
//     so nothing can start under the old member ID — the race of the
//     documented procedure, where an empty member started under the
//     still-registered ID panics with "tocommit(N) is out of range" and then
//     crash-loops on the WAL it wrote;
//  6. remove-member: MemberRemove of the stopped member (etcd always allows
//     removing a member that is down, if quorum remains);
//  7. add-learner: MemberAddAsLearner with the same peer URL, so the new
//     member does not vote (and does not count towards quorum) before it
//     has the data;
//  8. claim-on-target: release the held claim (its volume stays, Released)
//     and at once create the claim pinned to the target node: pre-bound to
//     a free local volume there when the class has no provisioner, else
//     annotated volume.kubernetes.io/selected-node (while the claim is held
//     the StatefulSet controller cannot create an unpinned one that the
//     scheduler would bind anywhere);
//  9. wait-pod: the pod runs on the target and answers Status as the new
//     learner of the same cluster (a pod placed elsewhere anyway has its
//     learner removed and is moved again); etcd serves clients only once it
//     has joined and applied what the leader sent, so this is most of the
//     catch-up;
//  10. catch-up: the learner's applied index reaches the leader's committed
//     index sampled when the wait began;
//  11. promote: MemberPromote, retried while etcd says "not in sync";
//  12. verify: all members voters, one agreed leader, HashKV equal at a
//     common revision, every voter holding the same number of keys at the
//     revision the relocation started from, the pod Ready on the target;
//  13. release-volume: wait for the snapshot to verify (take it again if the
//     stream failed, or on a resumed run), then set the old volume's reclaim
//     policy back to Delete, so its provisioner deletes it;
//  14. uncordon (only if this run cordoned), and finish (delete the
//     checkpoint).
//
// Waits on Kubernetes objects wake on their watch events; waits on etcd
// poll (from 50 ms, backing off to 500 ms). The snapshot is the one piece
// of work that runs alongside the steps; a cancelled Execute cancels it.
// Streaming it costs about as much as the learner's catch-up; overlapping
// the two keeps the whole move near twice the catch-up, but loads the
// cluster while it has no fault tolerance. Options.SnapshotFirst takes it
// before the member stops instead.
//
// # The algorithm (v1alpha2 layouts)
//
// The Cozystack operator owns membership: the plan never calls the
// membership API behind its back. It pins new members to the target with a
// temporary required node affinity on the EtcdCluster, deletes the
// EtcdMember under a quorum and PodDisruptionBudget guard (the operator's
// finalizer runs MemberRemove), waits for the operator's replacement to
// join as a learner on the target and be promoted, verifies, and restores
// the affinity.
//
// Names are generated in this layout, so joining the new member before the
// old one leaves would avoid the window without fault tolerance. The
// operator's documented behaviour does not allow it: it replaces a deleted
// member only after the deletion has finished (it waits for in-flight
// deletions and refills to spec.replicas), and a scale-down always removes
// the newest member — so "scale up, then remove the old one" removes the
// new one instead, and "scale up, delete the old one" makes the operator add
// yet another member. The plan therefore removes first here too, and says
// so in its Guarantee.
//
// # Guarantees
//
// Quorum is kept at every step, and only one membership change is in flight
// at a time. No member votes before it has caught up: the new member is a
// learner until its applied index has reached the leader's commit index. In
// a 3-member cluster fault tolerance is 0 from stopping the member to the
// promotion (mostly the catch-up time); a second failure in that window stops writes until
// it recovers, but loses no acknowledged write. Every membership call's
// ambiguous outcome (a timeout after the request reached a server) is
// settled by re-reading MemberList: "peer URL exists" on an add means
// added, "not a learner" on a promote means promoted, "member not found" on
// a remove means removed; "unhealthy cluster" (the 5-second strict
// reconfiguration check after any reconnect) is retried within
// Timeouts.Membership; "member not found" on an add means etcd derived
// the new ID (from the peer URL and the second) of a learner removed in the
// same second, and the add is made again in the next one. A member that
// stops answering (a stopped or hung process, a starved node) is waited for
// within Options.StallBudget: every member but the one moved is asked for
// its Status each second while a step runs, a silent one is reported as
// EventStalled (every 5 s) and EventRecovered progress events, and the time
// does not count against the interrupted wait; past the budget the step is
// cut short and Execute stops with a *StalledError (errors.Is ErrStalled)
// naming the member, the membership it left and how to resume (run Plan
// and Execute again once the member answers); nothing is rolled back for a
// stall. If the new pod does not run, or the learner does not
// catch up, within its bound, the executor removes the learner and stops,
// leaving N−1 voters, and says so loudly (*RolledBackError, an Error log,
// phase "rolled-back" in the checkpoint); it never re-adds the old member,
// whose data is gone from the cluster. The old member's volume is kept
// (reclaim policy Retain, named in the error) along with the snapshot.
// The error, the log line and every later Plan state the one call that
// restores the replica: Relocator.RestoreReplica with a node of your
// choice (the example program's --restore-to-node) deletes what the failed
// attempt left of the pod and claim, adds a learner with the member's peer
// URL, pins its new claim to that node, waits for it to catch up, promotes
// it and verifies the cluster is back to its voters with equal HashKV,
// under the same Lease; it is resumable and rolls back the same way.
// PlanRestore prints it first. At no point of the move is the data
// only on the voters: until the new member is verified and the snapshot
// has verified, the old volume keeps it.
//
// # Errors
//
// Preflight and PlanFor return a *PreflightError whose failures wrap the
// ErrX refusals (ErrTooFewVoters, ErrMemberDown, ErrLearnerPresent,
// ErrAlarm, ErrTargetHasReplica, ErrUnknownLayout, a *LockedError, ...).
// Execute returns a *LockedError (errors.Is ErrLocked) when another
// executor holds the Lease, a *StepError naming the step that failed (the
// checkpoint stays; run Plan and Execute again to resume; ErrLeaseLost and
// ErrPlanStale arrive this way, and so does a *StalledError when a member
// stopped answering for longer than Options.StallBudget), a
// *RolledBackError (errors.Is ErrRolledBack), or the context's error.
// RestoreReplica returns ErrNothingToRestore when no relocation rolled
// back. Waits that run out wrap ErrTimeout; quorum
// trouble wraps ErrQuorumAtRisk; membership that does not match the
// checkpoint wraps ErrUnexpectedMember. Verify wraps ErrVerify. Something
// that could not be observed (a voter that answers Status but not HashKV)
// wraps ErrNotObserved and is never reported as a mismatch.
//
// # Testing
//
// The executor's decisions talk to etcd only through MembershipClient
// (satisfied by *clientv3.Client), so its retries and the settling of
// ambiguous answers are tested against a fake as well as against real
// etcd.
//
// Package etcdrelocatetest builds observed states for unit tests
// (NewState), runs a steady write load that checks every acknowledged write
// afterwards (StartLoad), samples a cluster's fault tolerance while it
// changes (StartMonitor), raises alarms (RaiseAlarm), and replays the
// documented shell procedure as a baseline (ReplayDocumented). The
// package's own integration tests run real etcd members as pods on the
// simulated nodes of tenantkit's local environment, with a real
// kube-apiserver, controller manager and scheduler; they skip under -short.
package etcdrelocate
