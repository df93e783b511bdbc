package etcdrelocate

// Quorum returns the number of voters a cluster of the given size needs to
// make progress: ⌊voters/2⌋+1. Learners do not count.
func Quorum(voters int) int { return voters/2 + 1 }

// FaultTolerance returns how many more of the healthy voters can fail before
// the cluster loses quorum: healthy − Quorum(voters). A negative value means
// quorum is already lost.
func FaultTolerance(voters, healthy int) int { return healthy - Quorum(voters) }

// Membership is the shape of the cluster after a step, as the plan expects
// it: how many voters and learners, and how many voters are healthy (a voter
// that was just added but has not started is not healthy).
type Membership struct {
	Voters   int
	Learners int
	Healthy  int
}

// FaultTolerance returns FaultTolerance(m.Voters, m.Healthy).
func (m Membership) FaultTolerance() int { return FaultTolerance(m.Voters, m.Healthy) }

// apply returns the membership after a step's membership effect.
func (m Membership) apply(e effect) Membership {
	switch e {
	case effectRemoveVoter:
		m.Voters--
		m.Healthy--
	case effectStopVoter:
		m.Healthy--
	case effectRemoveStopped:
		m.Voters--
	case effectAddLearner:
		m.Learners++
	case effectPromote:
		m.Learners--
		m.Voters++
		m.Healthy++
	case effectRemoveLearner:
		m.Learners--
	}
	return m
}

// effect is what a step does to etcd's membership.
type effect int

const (
	effectNone effect = iota
	effectRemoveVoter
	effectStopVoter
	effectRemoveStopped
	effectAddLearner
	effectPromote
	effectRemoveLearner
)
