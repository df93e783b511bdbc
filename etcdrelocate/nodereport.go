package etcdrelocate

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

// NodeReport is what losing one node now would do to every tenant etcd of
// a management cluster: the answer an operator needs before draining,
// rebooting or replacing it.
type NodeReport struct {
	Node string `json:"node"`
	// Clusters are every tenant etcd, with a member on the node or not.
	Clusters []NodeImpact `json:"clusters"`
	// DrainSafe reports that a plain `kubectl drain` of the node keeps
	// every tenant etcd's quorum: each was observed, and each keeps a
	// fault tolerance of 0 or more without its members there. It is false
	// when a cluster could not be observed: an "ok" is proven or not said.
	DrainSafe bool `json:"drainSafe"`
}

// NodeImpact is one tenant etcd in a NodeReport.
type NodeImpact struct {
	ClusterRef
	Layout Layout `json:"layout,omitzero"`
	// Err says why the cluster could not be observed; the rest is then
	// unknown.
	Err string `json:"error,omitempty"`
	// Voters and Healthy count the voters, and those answering Status
	// (an alarm does not take a member out of the quorum).
	Voters  int `json:"voters"`
	Healthy int `json:"healthy"`
	// Alarms are the cluster's active alarms ("NOSPACE on etcd-1").
	Alarms []string `json:"alarms,omitempty"`
	// Members are where every member runs.
	Members []MemberPlace `json:"members"`
	// OnNode are the members on the reported node.
	OnNode []string `json:"onNode,omitempty"`
	// FaultTolerance is the cluster's now; After what it would be without
	// the node's members (negative: quorum lost).
	FaultTolerance int `json:"faultTolerance"`
	After          int `json:"faultToleranceAfter"`
	// CoLocated lists every node running two or more of the cluster's
	// voters, as "node: member, member" (cozystack/cozystack#3962: one
	// reboot costs such a cluster its quorum). PlanSpreadFor fixes it.
	CoLocated []string `json:"coLocated,omitempty"`
}

// MemberPlace is where one member runs.
type MemberPlace struct {
	Member string `json:"member"`
	Node   string `json:"node"`
	Voter  bool   `json:"voter"`
	// Healthy reports that it answered Status.
	Healthy bool `json:"healthy"`
}

// LosesQuorum reports whether losing the node would cost the cluster its
// quorum (or whether that is unknown).
func (i NodeImpact) LosesQuorum() bool { return i.Err != "" || i.After < 0 }

// ReportNode observes every tenant etcd (ObserveFleet) and reports what
// losing node would do to each (NodeReportFor).
func (r *Relocator) ReportNode(ctx context.Context, node string) (*NodeReport, error) {
	f, err := r.ObserveFleet(ctx)
	if err != nil {
		return nil, err
	}
	return NodeReportFor(f, node), nil
}

// NodeReportFor reports what losing node would do to every tenant etcd of
// f. It does no I/O.
func NodeReportFor(f *Fleet, node string) *NodeReport {
	rep := &NodeReport{Node: node, DrainSafe: true}
	for _, c := range f.Clusters {
		im := impactOf(c, node)
		rep.DrainSafe = rep.DrainSafe && !im.LosesQuorum()
		rep.Clusters = append(rep.Clusters, im)
	}
	return rep
}

// impactOf is what losing node does to one cluster.
func impactOf(c FleetCluster, node string) NodeImpact {
	im := NodeImpact{ClusterRef: c.ClusterRef}
	if c.Err != nil || c.State == nil {
		im.Err = fmt.Sprint(c.Err)
		return im
	}
	s := c.State
	im.Layout = s.Layout
	lostHealthy := 0
	byNode := map[string][]string{}
	for _, m := range s.Members {
		place := MemberPlace{Member: m.Label(), Node: m.Node(), Voter: m.Voter(), Healthy: m.Status != nil}
		im.Members = append(im.Members, place)
		if place.Voter {
			im.Voters++
			if place.Healthy {
				im.Healthy++
			}
			if place.Node != "" {
				byNode[place.Node] = append(byNode[place.Node], place.Member)
			}
		}
		if place.Node == node {
			im.OnNode = append(im.OnNode, place.Member)
			if place.Voter && place.Healthy {
				lostHealthy++
			}
		}
	}
	for _, a := range s.Alarms {
		label := FormatID(a.MemberID)
		if m := s.MemberByID(a.MemberID); m != nil {
			label = m.Label()
		}
		im.Alarms = append(im.Alarms, a.Type+" on "+label)
	}
	im.FaultTolerance = FaultTolerance(im.Voters, im.Healthy)
	im.After = FaultTolerance(im.Voters, im.Healthy-lostHealthy)
	im.CoLocated = coLocated(byNode)
	return im
}

// coLocated formats the nodes holding two or more members.
func coLocated(byNode map[string][]string) []string {
	var out []string
	for n, ms := range byNode {
		if len(ms) > 1 {
			out = append(out, n+": "+strings.Join(ms, ", "))
		}
	}
	sort.Strings(out)
	return out
}

// String renders the report as a table, one tenant etcd a line.
func (r *NodeReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Node %s: ", r.Node)
	if r.DrainSafe {
		b.WriteString("a plain drain keeps the quorum of every tenant etcd\n")
	} else {
		b.WriteString("a plain drain is NOT safe for the tenant etcds below\n")
	}
	for _, c := range r.Clusters {
		fmt.Fprintf(&b, "  %-36s ", c.ClusterRef)
		if c.Err != "" {
			fmt.Fprintf(&b, "unknown: %s\n", c.Err)
			continue
		}
		verdict := "no member here"
		switch {
		case c.After < 0:
			verdict = "LOSES QUORUM"
		case len(c.OnNode) > 0:
			verdict = "tolerates the loss"
		}
		fmt.Fprintf(&b, "%d/%d voters healthy, fault tolerance %d → %d: %s", c.Healthy, c.Voters, c.FaultTolerance, c.After, verdict)
		if len(c.OnNode) > 0 {
			fmt.Fprintf(&b, " (here: %s)", strings.Join(c.OnNode, ", "))
		}
		for _, cl := range c.CoLocated {
			fmt.Fprintf(&b, "; co-located %s", cl)
		}
		for _, a := range c.Alarms {
			fmt.Fprintf(&b, "; alarm %s", a)
		}
		b.WriteString("\n")
	}
	return b.String()
}
