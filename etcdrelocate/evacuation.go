package etcdrelocate

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// EvacuationOptions tune an evacuation (or a spread): how it is planned
// and how Evacuate runs it. The zero value is the safe default: cordon the
// node first, one relocation at a time, go on with the other tenants when
// one fails.
type EvacuationOptions struct {
	// MaxParallel bounds the relocations running at once (0 means 1).
	// Relocations of one tenant etcd never run at once.
	MaxParallel int
	// SkipCordon leaves the node schedulable. By default Evacuate cordons
	// it first and leaves it cordoned: the maintenance it is for is the
	// operator's.
	SkipCordon bool
	// StopOnFailure starts no further relocation once one failed (those
	// running finish). By default the other tenants go on.
	StopOnFailure bool
	// Relocation are the options of every relocation.
	Relocation Options
	// LeaseNamespace holds the Lease that keeps evacuations of one node
	// one at a time. Default "kube-system".
	LeaseNamespace string
}

// EvacuationPlan moves tenant etcd members off a node (or spreads the
// co-located members of one cluster, PlanSpreadFor) as a plain value:
// print it for a dry run, hand it to Evacuate. The same inputs give the
// same plan.
type EvacuationPlan struct {
	// Node is the node to empty ("" for a spread).
	Node string `json:"node,omitempty"`
	// Spread is the cluster a spread plan fixes (nil for an evacuation).
	Spread *ClusterRef `json:"spread,omitempty"`
	// Moves are the relocations, wave by wave.
	Moves []Move `json:"moves"`
	// Refused are the members that will not be moved, with the reasons.
	Refused []Refusal `json:"refused,omitempty"`
	// Options are the options it was planned with.
	Options EvacuationOptions `json:"-"`
}

// Move is one relocation of an EvacuationPlan.
type Move struct {
	ClusterRef
	// Member is the member's pod (StatefulSet layout) or EtcdMember.
	Member string `json:"member"`
	From   string `json:"from"`
	To     string `json:"to"`
	// Wave orders the moves: those of one wave may run at once (never two
	// of one cluster, never two onto one node); a wave starts when the one
	// before it has finished.
	Wave int `json:"wave"`
	// Resume is true when the move continues a relocation recorded in the
	// cluster's checkpoint (an earlier run stopped).
	Resume bool `json:"resume,omitempty"`
	// FaultTolerance is the cluster's now; MinFaultTolerance the lowest
	// its relocation leaves (0 for 3 voters while the member is out).
	FaultTolerance    int `json:"faultTolerance"`
	MinFaultTolerance int `json:"minFaultTolerance"`
}

// Refusal is a member an evacuation leaves where it is, and why.
type Refusal struct {
	ClusterRef
	Member  string   `json:"member,omitempty"`
	Reasons []string `json:"reasons"`
}

// PlanEvacuation observes every tenant etcd (ObserveFleet) and plans
// moving each member off node (PlanEvacuationFor).
func (r *Relocator) PlanEvacuation(ctx context.Context, node string, opts EvacuationOptions) (*EvacuationPlan, error) {
	f, err := r.ObserveFleet(ctx)
	if err != nil {
		return nil, err
	}
	return PlanEvacuationFor(f, node, opts)
}

// PlanEvacuationFor plans moving every tenant etcd member off node. It
// does no I/O. For each cluster with a member there it picks a target:
// Ready, not cordoned, not node, running no member of that cluster,
// tolerated by the member's pod (taints) and allowed by its node selector
// and required node affinity; among those the zone (topology.kubernetes.io/
// zone) with the fewest of the cluster's members, then the node running
// the fewest tenant etcd members, then the name. The first move of each
// cluster is checked as a single relocation's preflight would check it; a
// cluster that is degraded, unobservable, mid-relocation elsewhere or has
// no eligible node is refused with its reasons. A relocation recorded in a
// checkpoint from node is resumed.
func PlanEvacuationFor(f *Fleet, node string, opts EvacuationOptions) (*EvacuationPlan, error) {
	if f == nil {
		return nil, errNil("*Fleet")
	}
	if node == "" || f.node(node) == nil {
		return nil, fmt.Errorf("%w: node %q is not one of the cluster's nodes", ErrInvalidArgument, node)
	}
	p := &EvacuationPlan{Node: node, Options: opts}
	pl := newPlacer(f, node)
	for _, c := range f.Clusters {
		var members []string
		if c.State != nil {
			for _, m := range c.State.Members {
				if m.Node() == node {
					members = append(members, m.Label())
				}
			}
		}
		if c.Err == nil && len(members) == 0 && !checkpointFrom(c.State, node) {
			continue
		}
		p.planCluster(pl, c, members)
	}
	p.assignWaves()
	return p, nil
}

// PlanSpreadFor plans moving the co-located voters of one cluster apart
// (cozystack/cozystack#3962: two members on one node lose quorum together):
// on every node with more than one of its voters, all but the first (by
// name) move, with the targets and refusals of PlanEvacuationFor.
func PlanSpreadFor(f *Fleet, c ClusterRef, opts EvacuationOptions) (*EvacuationPlan, error) {
	if f == nil {
		return nil, errNil("*Fleet")
	}
	p := &EvacuationPlan{Spread: &c, Options: opts}
	for _, fc := range f.Clusters {
		if fc.ClusterRef != c {
			continue
		}
		if fc.Err != nil {
			p.Refused = append(p.Refused, Refusal{ClusterRef: c, Reasons: []string{"cannot be observed: " + fc.Err.Error()}})
			return p, nil
		}
		pl := newPlacer(f, "")
		byNode := map[string][]string{}
		for _, m := range fc.State.Voters() {
			byNode[m.Node()] = append(byNode[m.Node()], m.Label())
		}
		var extra []string
		for n, ms := range byNode {
			if n != "" && len(ms) > 1 {
				sort.Strings(ms)
				extra = append(extra, ms[1:]...)
			}
		}
		sort.Strings(extra)
		if len(extra) > 0 {
			p.planCluster(pl, fc, extra)
		}
		p.assignWaves()
		return p, nil
	}
	return nil, fmt.Errorf("%w: no tenant etcd %s", ErrInvalidArgument, c)
}

// planCluster plans the moves of members of one cluster, or refuses them.
func (p *EvacuationPlan) planCluster(pl *placer, c FleetCluster, members []string) {
	refuse := func(member string, reasons ...string) {
		p.Refused = append(p.Refused, Refusal{ClusterRef: c.ClusterRef, Member: member, Reasons: reasons})
	}
	if c.Err != nil {
		refuse(strings.Join(members, ", "), "cannot be observed: "+c.Err.Error())
		return
	}
	s := c.State
	if cp := s.Checkpoint; cp != nil {
		if cp.SourceNode == p.Node && p.Node != "" && cp.Phase == PhaseRunning {
			p.Moves = append(p.Moves, Move{ClusterRef: c.ClusterRef, Member: cp.Pod + cp.EtcdMember, From: cp.SourceNode,
				To: cp.TargetNode, Resume: true, FaultTolerance: FaultTolerance(len(s.Voters()), healthyVoters(s))})
			pl.take(c.ClusterRef, cp.TargetNode)
			return
		}
		refuse(strings.Join(members, ", "), fmt.Sprintf("a relocation of %s from %s to %s is recorded in checkpoint %s (%s): finish or restore it first",
			cp.Pod+cp.EtcdMember, orNone(cp.SourceNode), cp.TargetNode, checkpointName(s.Cluster), cp.Phase))
		return
	}
	for i, member := range members {
		target, why := pl.choose(s, member)
		if target == "" {
			refuse(member, "no eligible node: "+why)
			continue
		}
		mv := Move{ClusterRef: c.ClusterRef, Member: member, From: s.FindMember(member).Node(), To: target,
			FaultTolerance: FaultTolerance(len(s.Voters()), healthyVoters(s))}
		if i == 0 { // later moves of the cluster are checked when their turn comes
			plan, err := PlanFor(s, Request{Namespace: c.Namespace, Cluster: c.Cluster, Member: member, TargetNode: target, Options: p.Options.Relocation})
			if err != nil {
				refuse(member, reasonsOf(err)...)
				return
			}
			mv.MinFaultTolerance = plan.MinFaultTolerance
		} else {
			mv.MinFaultTolerance = p.Moves[len(p.Moves)-1].MinFaultTolerance
		}
		pl.take(c.ClusterRef, target)
		p.Moves = append(p.Moves, mv)
	}
}

// reasonsOf lists a refusal's reasons: each of a *PreflightError's, else
// the error.
func reasonsOf(err error) []string {
	var pe *PreflightError
	if errors.As(err, &pe) {
		var out []string
		for _, f := range pe.Failures {
			out = append(out, f.Check+": "+f.Err.Error())
		}
		return out
	}
	return []string{err.Error()}
}

// healthyVoters counts the voters answering Status.
func healthyVoters(s *State) int {
	n := 0
	for _, m := range s.Voters() {
		if m.Status != nil {
			n++
		}
	}
	return n
}

// checkpointFrom reports a relocation recorded in s that moves a member
// off node.
func checkpointFrom(s *State, node string) bool {
	return s != nil && s.Checkpoint != nil && s.Checkpoint.SourceNode == node
}

// assignWaves puts each move in the first wave that holds no move of the
// same cluster or onto the same node and comes after the cluster's
// earlier moves.
func (p *EvacuationPlan) assignWaves() {
	type slot struct{ clusters, targets map[string]bool }
	var waves []slot
	last := map[ClusterRef]int{}
	for i := range p.Moves {
		m := &p.Moves[i]
		w, seen := last[m.ClusterRef]
		if seen {
			w++
		}
		for ; ; w++ {
			for len(waves) <= w {
				waves = append(waves, slot{map[string]bool{}, map[string]bool{}})
			}
			if !waves[w].clusters[m.ClusterRef.String()] && !waves[w].targets[m.To] {
				break
			}
		}
		waves[w].clusters[m.ClusterRef.String()], waves[w].targets[m.To] = true, true
		m.Wave, last[m.ClusterRef] = w, w
	}
	sort.SliceStable(p.Moves, func(i, j int) bool { return p.Moves[i].Wave < p.Moves[j].Wave })
}

// String renders the plan for a dry run: the moves wave by wave, then the
// refusals.
func (p *EvacuationPlan) String() string {
	var b strings.Builder
	if p.Spread != nil {
		fmt.Fprintf(&b, "Spread the co-located members of %s: %s", p.Spread, plural(len(p.Moves), "move"))
	} else {
		fmt.Fprintf(&b, "Evacuate %s: %s", p.Node, plural(len(p.Moves), "move"))
	}
	fmt.Fprintf(&b, ", %d refused; at most %d at once\n", len(p.Refused), max(p.Options.MaxParallel, 1))
	for i, m := range p.Moves {
		if i == 0 || m.Wave != p.Moves[i-1].Wave {
			fmt.Fprintf(&b, "wave %d:\n", m.Wave+1)
		}
		resume := ""
		if m.Resume {
			resume = " (resumes the relocation recorded in the cluster)"
		}
		fmt.Fprintf(&b, "  %-36s %-12s %s → %s, fault tolerance %d, at least %d while it moves%s\n",
			m.ClusterRef, m.Member, m.From, m.To, m.FaultTolerance, m.MinFaultTolerance, resume)
	}
	for _, r := range p.Refused {
		fmt.Fprintf(&b, "refused %s %s: %s\n", r.ClusterRef, r.Member, strings.Join(r.Reasons, "; "))
	}
	return b.String()
}

// plural returns "1 move" or "n moves".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
