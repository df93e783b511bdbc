package gpushare_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/cozystack/tenantkit/gpushare"
	"github.com/cozystack/tenantkit/gpushare/gpusharetest"
	"github.com/cozystack/tenantkit/gpushare/internal/hamiref"
)

// TestDifferentialProblems feeds random pod objects (placed, finished,
// without node, malformed, on unknown nodes and GPUs) to the ledger and
// compares what it counts with what HAMi's pod handler counts, and checks
// that Problems lists exactly the pods whose allocation HAMi leaves out,
// wholly or in part.
func TestDifferentialProblems(t *testing.T) {
	cases, agree := 0, 0
	var diffs []string
	for seed := range 100 {
		rng := rand.New(rand.NewPCG(uint64(seed), 56))
		nodes := randomNodes(rng)
		w := newWorld(t, gpushare.Config{}, nodes)
		var pods []*corev1.Pod
		for i := range 30 {
			n := nodes[rng.IntN(len(nodes))]
			d := n.devs[rng.IntN(len(n.devs))]
			p := held(fmt.Sprintf("p%d", i), n.name, gpushare.ContainerAllocation{share(d.ID, 100, 10)})
			if rng.IntN(8) == 0 {
				p.Node = "elsewhere"
			}
			if rng.IntN(8) == 0 {
				p.Containers[0][0].UUID = "GPU-unknown"
			}
			pod := gpusharetest.AllocatedPodT(t, p)
			switch rng.IntN(10) {
			case 0:
				delete(pod.Annotations, gpushare.AnnotationNode)
			case 1:
				pod.Annotations[gpushare.AnnotationAllocated] = d.ID + ",NVIDIA,lots,1:;"
			case 2:
				pod.Annotations[gpushare.AnnotationAllocated] = d.ID + ",NVIDIA,1:;"
			case 3:
				pod.Status.Phase = []corev1.PodPhase{corev1.PodSucceeded, corev1.PodFailed, corev1.PodPending}[rng.IntN(3)]
			}
			_ = w.ledger.SetPod(pod)
			pods = append(pods, pod)
		}
		refN := w.refNodes()
		probs := w.ledger.Problems()
		var held []hamiref.Held
		for _, pod := range pods {
			node, alloc, counted := hamiref.Counted(pod.Annotations, string(pod.Status.Phase))
			if counted {
				held = append(held, hamiref.Held{Node: node, Containers: alloc})
			}
			_, hasAlloc := pod.Annotations[gpushare.AnnotationAllocated]
			finished := pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
			wantProblem := hasAlloc && !finished && (!counted || leftOut(refN, node, alloc))
			_, inLedger := w.ledger.Pod(pod.Namespace, pod.Name)
			_, gotProblem := probs["pod/"+pod.Namespace+"/"+pod.Name]
			cases++
			if inLedger == counted && gotProblem == wantProblem {
				agree++
			} else if len(diffs) < 5 {
				diffs = append(diffs, fmt.Sprintf("%s %v: counted %v/%v, problem %v/%v", pod.Name, pod.Annotations, inLedger, counted, gotProblem, wantProblem))
			}
		}
		hamiref.Recount(refN, held, false)
		for _, rn := range refN {
			nu, _ := w.ledger.Node(rn.Name)
			used := map[string]gpushare.Amount{}
			for _, g := range nu.GPUs {
				used[g.ID] = g.Used
			}
			for _, rd := range rn.Devices {
				require.Equal(t, gpushare.Amount{Slots: int64(rd.Used), MemoryMiB: int64(rd.Usedmem), Cores: int64(rd.Usedcores)}, used[rd.ID], "seed %d GPU %s", seed, rd.ID)
			}
		}
	}
	t.Logf("problems: %d/%d pods agree", agree, cases)
	require.Equal(t, cases, agree, "%v", diffs)
}

// leftOut reports a counted allocation with shares on no registered node or
// GPU: HAMi ignores those shares.
func leftOut(nodes []hamiref.Node, node string, alloc [][]hamiref.Alloc) bool {
	for _, n := range nodes {
		if n.Name != node {
			continue
		}
		for _, c := range alloc {
			for _, a := range c {
				found := false
				for _, d := range n.Devices {
					found = found || d.ID == a.UUID
				}
				if !found {
					return true
				}
			}
		}
		return false
	}
	return true
}
