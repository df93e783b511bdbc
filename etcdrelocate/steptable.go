package etcdrelocate

import (
	"context"
	"fmt"
)

// stepDef is the one declaration of a step: its kind, what it does (the
// table of steps in docs/etcdrelocate.md is checked against it), its
// effect on etcd's membership (from which a plan works out the fault
// tolerance each step leaves), the body the executor runs (it works out
// whether its work is already done, so a re-run resumes), and whether a
// timeout in it rolls the new member back. A plan lists steps by kind
// with the words of its own member and target (Plan.build); the executor
// runs and rolls back by this table alone.
type stepDef struct {
	kind   StepKind
	does   string
	effect effect
	run    func(*run, context.Context) (string, bool, error)
	// rollsBack: a timeout of the new member here removes its learner
	// again (StatefulSet layout; the operator owns v1alpha2 membership).
	rollsBack bool
}

// stepTable declares every step, in the order a plan holds them.
var stepTable = []stepDef{
	{StepCheckpoint, "record the relocation (member, pod and claim UIDs, target) in the checkpoint ConfigMap", effectNone, (*run).checkpoint, false},
	{StepClearMember, "restore only: hold and delete what is left of the removed member's pod and claim", effectNone, (*run).clearMember, false},
	{StepMoveLeader, "move leadership away from the member", effectNone, (*run).moveLeader, false},
	{StepSnapshot, "stream a snapshot from a healthy voter other than the member", effectNone, (*run).snapshot, false},
	{StepCordon, "cordon the member's node", effectNone, (*run).cordon, false},
	{StepPinPlacement, "v1alpha2: require the target node in the EtcdCluster's affinity", effectNone, (*run).pinPlacement, false},
	{StepStopMember, "StatefulSet: retain the volume, hold and delete the claim, delete the pod", effectStopVoter, (*run).stopMember, false},
	{StepRemoveMember, "StatefulSet: MemberRemove the stopped member", effectRemoveStopped, (*run).removeMember, false},
	{StepDeleteEtcdMember, "v1alpha2: delete the EtcdMember; the operator removes the member", effectRemoveVoter, (*run).deleteEtcdMember, false},
	{StepAddLearner, "StatefulSet: MemberAddAsLearner the member's peer URL", effectAddLearner, (*run).addLearner, false},
	{StepClaimOnTarget, "StatefulSet: create the member's claim pinned to the target node", effectNone, (*run).claimOnTarget, true},
	{StepWaitPod, "StatefulSet: wait for the new pod running on the target", effectNone, (*run).waitPod, true},
	{StepCatchUp, "StatefulSet: wait until the learner has applied the leader's committed index", effectNone, (*run).catchUp, true},
	{StepPromote, "StatefulSet: MemberPromote the learner", effectPromote, (*run).promote, true},
	{StepWaitReplacement, "v1alpha2: wait for the operator's replacement learner on the target", effectAddLearner, (*run).waitReplacement, true},
	{StepWaitVoter, "v1alpha2: wait for the operator to promote the replacement", effectPromote, (*run).waitVoter, true},
	{StepVerify, "every member a voter, one leader, HashKV equal, the pod Ready on the target", effectNone, (*run).verify, false},
	{StepReleaseVolume, "StatefulSet: once the snapshot verified, let the old volume go", effectNone, (*run).releaseVolume, false},
	{StepUnpinPlacement, "v1alpha2: restore the EtcdCluster's own affinity", effectNone, (*run).unpinPlacement, false},
	{StepUncordon, "uncordon the source node if this relocation cordoned it", effectNone, (*run).uncordon, false},
	{StepFinish, "delete the checkpoint ConfigMap", effectNone, (*run).finish, false},
}

// stepDefs indexes stepTable by kind.
var stepDefs = func() map[StepKind]*stepDef {
	m := make(map[StepKind]*stepDef, len(stepTable))
	for i := range stepTable {
		m[stepTable[i].kind] = &stepTable[i]
	}
	return m
}()

// defOf returns the declaration of kind.
func defOf(kind StepKind) (*stepDef, error) {
	d, ok := stepDefs[kind]
	if !ok {
		return nil, fmt.Errorf("%w: unknown step %q", ErrInvalidConfig, kind)
	}
	return d, nil
}
