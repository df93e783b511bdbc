package gpushare_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cozystack/tenantkit/gpushare"
	"github.com/cozystack/tenantkit/gpushare/gpusharetest"
	"github.com/cozystack/tenantkit/gpushare/internal/hamiref"
)

// The differential tests run gpushare and hamiref (an independent model of
// HAMi v2.10's scheduler, written from HAMi's source) on the same cluster
// and the same pods, and count where they agree. After each pod both sides
// commit HAMi's decision, so every comparison starts from the same state.

// diffNode is a node as its registration lists it.
type diffNode struct {
	name   string
	devs   []gpushare.Device // registration order
	cordon []string
}

// world is the cluster both sides see: registrations and the pods held.
type world struct {
	cfg    gpushare.Config
	nodes  []diffNode
	held   []gpushare.Placement
	ledger *gpushare.Ledger
	// written is the allocation string HAMi wrote for each held pod, by
	// name (hamiref.Encode); both sides count the pod from it.
	written map[string]string
	// ref is HAMi's QuotaManager once a quota is set, hard each quota's
	// last spec.hard, usage what AddUsage added per held pod.
	ref   *hamiref.QuotaManager
	hard  map[string]map[string]int64
	usage map[string][][]hamiref.Alloc
}

func newWorld(t *testing.T, cfg gpushare.Config, nodes []diffNode) *world {
	t.Helper()
	l, err := gpushare.NewLedger(cfg)
	require.NoError(t, err)
	for _, n := range nodes {
		node := gpusharetest.NodeT(t, n.name, n.devs...)
		if len(n.cordon) > 0 {
			node.Annotations[gpushare.AnnotationCordon] = gpushare.EncodeCordon(n.cordon)
		}
		require.NoError(t, l.SetNode(node))
	}
	return &world{cfg: l.Config(), nodes: nodes, ledger: l, written: map[string]string{}}
}

// refNodes is the cluster as HAMi's scheduler holds it, usage counted by
// hamiref from the held pods.
func (w *world) refNodes() []hamiref.Node {
	out := make([]hamiref.Node, len(w.nodes))
	for i, n := range w.nodes {
		out[i].Name = n.name
		for _, d := range n.devs {
			out[i].Devices = append(out[i].Devices, hamiref.Device{ID: d.ID, Index: d.Index, NUMA: d.NUMA,
				Type: d.Type, Mode: d.Mode, Health: d.Health, Cordoned: slices.Contains(n.cordon, d.ID),
				Count: d.Count, Totalmem: d.MemoryMiB, Totalcore: d.Cores})
		}
	}
	held := make([]hamiref.Held, len(w.held))
	for i, p := range w.held {
		held[i] = hamiref.Held{Node: p.Node, InitCount: p.InitContainers, Containers: refAllocs(p.Containers)}
		if raw, ok := w.written[p.Name]; ok {
			held[i].Containers, _ = hamiref.Decode(raw)
		}
	}
	hamiref.Recount(out, held, w.cfg.CollapseInitContainers)
	return out
}

func refAllocs(p gpushare.PodAllocation) [][]hamiref.Alloc {
	out := make([][]hamiref.Alloc, len(p))
	for i, c := range p {
		for _, d := range c {
			out[i] = append(out[i], hamiref.Alloc{UUID: d.UUID, Mem: d.MemoryMiB, Cores: d.Cores})
		}
	}
	return out
}

// refPod is the pod as HAMi's scheduler reads it: requests with the 101
// "unset" percentage (a request without memory takes 100 %, HAMi's
// defaultMemory 0) and the annotations its selectors and policies come
// from.
func refPod(r gpushare.PodRequest) hamiref.Pod {
	p := hamiref.Pod{Annotations: map[string]string{}, Namespace: r.Namespace,
		Weights: hamiref.Weights{Slot: r.Weights.Slot, Core: r.Weights.Core, Memory: r.Weights.Memory}}
	for _, c := range r.Containers {
		rc := hamiref.Container{Init: c.Init, Nums: c.Count, Memreq: c.MemoryMiB, MemPercentagereq: 101, Coresreq: c.Cores}
		if c.Init {
			p.NumInit++
		}
		switch {
		case c.MemoryPercent > 0:
			rc.MemPercentagereq = c.MemoryPercent
		case c.MemoryMiB == 0:
			rc.MemPercentagereq = 100
		}
		p.Containers = append(p.Containers, rc)
	}
	s := r.Selectors
	for key, list := range map[string][]string{hamiref.AnnoUseType: s.UseTypes, hamiref.AnnoNoUseType: s.NoUseTypes,
		hamiref.AnnoUseUUID: s.UseUUIDs, hamiref.AnnoNoUseUUID: s.NoUseUUIDs} {
		if len(list) > 0 {
			p.Annotations[key] = strings.Join(list, ",")
		}
	}
	if s.Mode != "" {
		p.Annotations[hamiref.AnnoMode] = s.Mode
	}
	if s.NUMABind {
		p.Annotations[hamiref.AnnoNUMABind] = "true"
	}
	if r.NodePolicy != "" {
		p.Annotations[hamiref.AnnoNodePolicy] = string(r.NodePolicy)
	}
	if r.GPUPolicy != "" {
		p.Annotations[hamiref.AnnoGPUPolicy] = string(r.GPUPolicy)
	}
	return p
}

// tally counts agreement per aspect.
type tally struct {
	cases, agree                                          int
	outcome, node, gpus, score, reasons, blocker, nodeSum int
	diffs                                                 []string
	blockers                                              map[gpushare.BlockerKind]int
}

func (t *tally) String() string {
	return fmt.Sprintf("%d/%d decisions agree (%.1f%%): outcome %d, node %d, GPU picks %d, node score %d, fail reasons %d, blocker %d, node scores and usage %d",
		t.agree, t.cases, 100*float64(t.agree)/float64(max(t.cases, 1)), t.outcome, t.node, t.gpus, t.score, t.reasons, t.blocker, t.nodeSum)
}

// decide compares gpushare's Fit with HAMi's decision for req, then commits
// HAMi's decision on both sides. It returns whether everything agreed.
func (w *world) decide(t *testing.T, tl *tally, req gpushare.PodRequest) bool {
	t.Helper()
	refN := w.refNodes()
	refP := refPod(req)
	refP.Quota = w.ref
	d := hamiref.Schedule(refN, refP, string(w.cfg.NodePolicy), string(w.cfg.GPUPolicy))
	pl, err := w.ledger.Fit(req)
	var fe *gpushare.FitError
	if err != nil && !errors.As(err, &fe) {
		require.NoError(t, err)
	}
	ok := [7]bool{true, true, true, true, true, true, true}
	ok[6] = w.usageAgrees(t, refN, d)
	var why []string
	switch {
	case len(d.Best) == 0 && fe == nil:
		ok[0], ok[1], ok[2], ok[3] = false, false, false, false
		why = append(why, "gpushare fits "+pl.Node+", HAMi fits nowhere")
	case len(d.Best) == 0:
		if ok[4] = reasonsAgree(d, fe); !ok[4] {
			why = append(why, reasonDiff)
		}
		if tl.blockers == nil {
			tl.blockers = map[gpushare.BlockerKind]int{}
		}
		tl.blockers[fe.Blocker.Kind]++
		if ok[5] = w.blockerAgrees(refN, req, fe.Blocker); !ok[5] {
			why = append(why, fmt.Sprintf("blocker %+v", fe.Blocker))
		}
	case fe != nil:
		ok[0], ok[1], ok[2], ok[3] = false, false, false, false
		why = append(why, "gpushare: "+err.Error())
	default:
		ok[1] = slices.Contains(d.Best, pl.Node)
		node := pl.Node
		if !ok[1] {
			node = d.Best[0]
			why = append(why, fmt.Sprintf("node %s, HAMi %v", pl.Node, d.Best))
		}
		r, _ := d.Result(node)
		ok[2] = ok[1] && slices.Equal(flatten(refAllocs(pl.Containers)), flatten(r.Containers))
		if !ok[2] {
			why = append(why, fmt.Sprintf("GPUs %v, HAMi %v", refAllocs(pl.Containers), r.Containers))
		}
		var refNode hamiref.Node
		for _, n := range refN {
			if n.Name == node {
				refNode = n
			}
		}
		raw := hamiref.Encode(refNode, r.Containers)
		if ok[2] {
			if got := pl.Annotations(gpusharetest.Epoch())[gpushare.AnnotationAllocated]; got != raw {
				ok[2] = false
				why = append(why, fmt.Sprintf("writes %q, HAMi %q", got, raw))
			}
		}
		ok[3] = w.placementScoreAgrees(pl, r)
		commit := pl
		commit.Node, commit.Containers = node, hamiAllocation(r.Containers)
		require.NoError(t, w.ledger.Allocate(commit), "HAMi's decision must be allocatable")
		// Then the pod as HAMi annotated it, which both sides count.
		pod := gpusharetest.AllocatedPodT(t, commit)
		pod.Annotations[gpushare.AnnotationAllocated], pod.Annotations[gpushare.AnnotationToAllocate] = raw, raw
		require.NoError(t, w.ledger.SetPod(pod))
		w.written[commit.Name] = raw
		w.held = append(w.held, commit)
		if w.ref != nil { // AddUsage(pod, CollapseInitContainerUsage(pod, m.Devices))
			written, _ := hamiref.Decode(raw)
			u := hamiref.Collapse(commit.InitContainers, written)
			w.ref.AddUsage(commit.Namespace, u)
			if w.usage == nil {
				w.usage = map[string][][]hamiref.Alloc{}
			}
			w.usage[usageKey(commit.Namespace, commit.Name)] = u
		}
	}
	tl.cases++
	for i, p := range []*int{&tl.outcome, &tl.node, &tl.gpus, &tl.score, &tl.reasons, &tl.blocker, &tl.nodeSum} {
		if ok[i] {
			*p++
		}
	}
	all := ok == [7]bool{true, true, true, true, true, true, true}
	if all {
		tl.agree++
	} else if len(tl.diffs) < 5 {
		tl.diffs = append(tl.diffs, fmt.Sprintf("%s %v: %s", req.Name, ok, strings.Join(why, "; ")))
	}
	return all
}

func flatten(p [][]hamiref.Alloc) []string {
	var out []string
	for i, c := range p {
		for _, a := range c {
			out = append(out, fmt.Sprintf("%d:%s/%d/%d", i, a.UUID, a.Mem, a.Cores))
		}
		out = append(out, ";")
	}
	return out
}

func hamiAllocation(p [][]hamiref.Alloc) gpushare.PodAllocation {
	out := make(gpushare.PodAllocation, len(p))
	for i, c := range p {
		out[i] = gpushare.ContainerAllocation{}
		for _, a := range c {
			out[i] = append(out[i], share(a.UUID, a.Mem, a.Cores))
		}
	}
	return out
}

// usageAgrees compares the ledger's per-GPU usage and node scores with
// HAMi's view.
func (w *world) usageAgrees(t *testing.T, refN []hamiref.Node, d hamiref.Decision) bool {
	t.Helper()
	for i, rn := range refN {
		nu, ok := w.ledger.Node(rn.Name)
		if !ok || nu.Score != d.Nodes[i].Score {
			return false
		}
		for _, rd := range rn.Devices {
			for _, g := range nu.GPUs {
				if g.ID == rd.ID && g.Used != (gpushare.Amount{Slots: int64(rd.Used), MemoryMiB: int64(rd.Usedmem), Cores: int64(rd.Usedcores)}) {
					return false
				}
			}
		}
	}
	return true
}

// reasonsAgree compares, per failing node, the per-GPU reasons of the first
// container that failed with the counts HAMi's Fit reports, NumaNotFit
// included (its bookkeeping reason AllocatedCardsInsufficientRequest
// aside).
var reasonDiff string

func reasonsAgree(d hamiref.Decision, fe *gpushare.FitError) bool {
	for _, f := range fe.Nodes {
		r, ok := d.Result(f.Node)
		if !ok {
			return false
		}
		got := map[string]int{}
		for _, g := range f.GPUs {
			got[string(g.Reason)]++
		}
		if len(f.GPUs) == 0 && f.Reason != gpushare.ReasonAllocatedCardsInsufficientRequest {
			got[string(f.Reason)]++
		}
		want := map[string]int{}
		for k, v := range r.Reasons {
			if k != hamiref.AllocatedCardsInsufficientRequest {
				want[k] = v
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			reasonDiff = fmt.Sprintf("%s: gpushare %v, HAMi %v", f.Node, got, want)
			return false
		}
	}
	return true
}

// blockerAgrees checks the FitError's blocker against HAMi fitting each
// container on its own: NotTogether when every container fits alone
// somewhere, otherwise a container that fits alone nowhere.
func (w *world) blockerAgrees(refN []hamiref.Node, req gpushare.PodRequest, b gpushare.Blocker) bool {
	alone := func(c gpushare.ContainerRequest) bool {
		r := req
		r.Containers = []gpushare.ContainerRequest{c}
		return len(hamiref.Schedule(refN, refPod(r), string(w.cfg.NodePolicy), string(w.cfg.GPUPolicy)).Best) > 0
	}
	if b.Kind == gpushare.BlockQuota { // HAMi fits it once the quota is left out
		return b.Quota != nil && len(hamiref.Schedule(refN, refPod(req), string(w.cfg.NodePolicy), string(w.cfg.GPUPolicy)).Best) > 0
	}
	if b.Kind == gpushare.BlockNotTogether {
		for _, c := range req.Containers {
			if c.Count > 0 && !alone(c) {
				return false
			}
		}
		return true
	}
	for _, c := range req.Containers {
		if c.Name == b.Container {
			return b.Kind != "" && b.Detail != "" && !alone(c)
		}
	}
	return false
}
