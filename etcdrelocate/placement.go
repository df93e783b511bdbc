package etcdrelocate

import (
	"fmt"
	"sort"
	"strings"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
)

// placer chooses targets for the moves of an evacuation or spread: it
// knows every cluster's members per node and the moves planned so far.
type placer struct {
	f *Fleet
	// avoid is the node being emptied ("" for a spread).
	avoid string
	// load counts tenant etcd members per node, planned moves included.
	load map[string]int
	// taken lists, per cluster, the nodes its planned moves go to.
	taken map[ClusterRef][]string
}

func newPlacer(f *Fleet, avoid string) *placer {
	pl := &placer{f: f, avoid: avoid, load: map[string]int{}, taken: map[ClusterRef][]string{}}
	for _, c := range f.Clusters {
		if c.State == nil {
			continue
		}
		for _, m := range c.State.Members {
			pl.load[m.Node()]++
		}
	}
	return pl
}

// take records a planned move of cluster c onto node.
func (pl *placer) take(c ClusterRef, node string) {
	pl.taken[c] = append(pl.taken[c], node)
	pl.load[node]++
}

// choose returns the target for member of s, or "" and why no node is
// eligible.
func (pl *placer) choose(s *State, member string) (string, string) {
	m := s.FindMember(member)
	if m == nil {
		return "", "no member " + member
	}
	c := ClusterRef{Namespace: s.Namespace, Cluster: s.Cluster}
	holds, zones := map[string]bool{}, map[string]int{}
	for _, o := range s.Members {
		holds[o.Node()] = true
		if o.ID != m.ID {
			if n := pl.f.node(o.Node()); n != nil {
				zones[n.zone()]++
			}
		}
	}
	for _, n := range pl.taken[c] {
		holds[n] = true
		if node := pl.f.node(n); node != nil {
			zones[node.zone()]++
		}
	}
	var sched Scheduling
	if m.Pod != nil {
		sched = m.Pod.Scheduling
	}
	var eligible []Node
	var why []string
	for _, n := range pl.f.Nodes {
		if r := pl.ineligible(n, holds, sched); r != "" {
			why = append(why, n.Name+" "+r)
			continue
		}
		eligible = append(eligible, n)
	}
	if len(eligible) == 0 {
		return "", strings.Join(why, "; ")
	}
	sort.SliceStable(eligible, func(i, j int) bool {
		a, b := eligible[i], eligible[j]
		if za, zb := zones[a.zone()], zones[b.zone()]; za != zb {
			return za < zb
		}
		if la, lb := pl.load[a.Name], pl.load[b.Name]; la != lb {
			return la < lb
		}
		return a.Name < b.Name
	})
	return eligible[0].Name, ""
}

// ineligible says why node n cannot take a member of a cluster whose
// members (and planned targets) are on holds, for a pod scheduled by
// sched; "" when it can.
func (pl *placer) ineligible(n Node, holds map[string]bool, sched Scheduling) string {
	switch {
	case n.Name == pl.avoid:
		return "is the node being emptied"
	case holds[n.Name]:
		return "runs a member of the cluster"
	case !n.Ready:
		return "is not Ready"
	case n.Unschedulable:
		return "is cordoned"
	}
	node := &corev1.Node{Spec: corev1.NodeSpec{Taints: n.Taints}}
	node.Name, node.Labels = n.Name, n.Labels
	for i := range n.Taints {
		t := &n.Taints[i]
		if t.Effect == corev1.TaintEffectPreferNoSchedule || tolerated(sched.Tolerations, t) {
			continue
		}
		return fmt.Sprintf("has taint %s=%s:%s the pod does not tolerate", t.Key, t.Value, t.Effect)
	}
	pod := &corev1.Pod{Spec: corev1.PodSpec{NodeSelector: sched.NodeSelector, Affinity: sched.Affinity}}
	if ok, err := nodeaffinity.GetRequiredNodeAffinity(pod).Match(node); err != nil || !ok {
		return "does not match the pod's node selector or required node affinity"
	}
	return ""
}

// tolerated reports whether one of ts tolerates taint t, as the
// scheduler's TaintToleration filter decides (k8s.io/api's
// Toleration.ToleratesTaint).
func tolerated(ts []corev1.Toleration, t *corev1.Taint) bool {
	for i := range ts {
		if ts[i].ToleratesTaint(logr.Discard(), t, false) {
			return true
		}
	}
	return false
}
