package gpushare_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cozystack/tenantkit/gpushare"
	"github.com/cozystack/tenantkit/gpushare/gpusharetest"
	"github.com/cozystack/tenantkit/gpushare/internal/hamiref"
)

// handlerPod draws a placed pod as HAMi annotates it: init containers and
// GPU-less containers among the others, entries written HAMi's way (no
// placeholders unless the node has an NVIDIA-typed device).
func handlerPod(rng *rand.Rand, name string, n diffNode, ref hamiref.Node) *corev1.Pod {
	pod := gpusharetest.Pod("h", name)
	var ctrs [][]hamiref.Alloc
	inits := rng.IntN(3)
	for i := range inits + 1 + rng.IntN(3) {
		c := corev1.Container{Name: fmt.Sprintf("c%d", i)}
		var a []hamiref.Alloc
		if rng.IntN(3) != 0 {
			d := n.devs[rng.IntN(len(n.devs))]
			a = append(a, hamiref.Alloc{UUID: d.ID, Mem: int32(1000 * (1 + rng.IntN(20))), Cores: int32(10 * rng.IntN(5))})
		}
		ctrs = append(ctrs, a)
		if i < inits {
			pod.Spec.InitContainers = append(pod.Spec.InitContainers, c)
		} else {
			pod.Spec.Containers = append(pod.Spec.Containers, c)
		}
	}
	raw := hamiref.Encode(ref, ctrs)
	pod.Annotations = map[string]string{gpushare.AnnotationNode: n.name, gpushare.AnnotationAllocated: raw}
	pod.Status.Phase = corev1.PodRunning
	return pod
}

func handlerEvent(pod *corev1.Pod) hamiref.PodEvent {
	return hamiref.PodEvent{Key: pod.Namespace + "/" + pod.Name, Annotations: pod.Annotations, Phase: string(pod.Status.Phase),
		Terminating: pod.DeletionTimestamp != nil, InitCount: len(pod.Spec.InitContainers),
		InitSucceeded: gpushare.InitContainersSucceeded(pod)}
}

// TestDifferentialPodHandler replays random pod histories (added, init
// containers succeeding, terminating, finishing, deleted; some pods first
// seen terminating or with their init containers done) through the
// ledger's SetPod and DeletePod and through hamiref's model of HAMi's pod
// handlers, and compares every GPU's usage after each event.
func TestDifferentialPodHandler(t *testing.T) {
	cases, agree := 0, 0
	var diffs []string
	base := diffSeed(t)
	for seed := base; seed < base+300; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 90))
		nodes := randomNodes(rng)
		w := newWorld(t, gpushare.Config{CollapseInitContainers: true}, nodes)
		refN := w.refNodes()
		var cache hamiref.Cache
		seen := map[string]bool{}
		var pods []*corev1.Pod
		for i := range 40 {
			var pod *corev1.Pod
			if len(pods) == 0 || rng.IntN(3) == 0 {
				ni := rng.IntN(len(nodes))
				pod = handlerPod(rng, fmt.Sprintf("p%d", i), nodes[ni], refN[ni])
				pods = append(pods, pod)
			} else {
				pod = pods[rng.IntN(len(pods))].DeepCopy()
			}
			switch rng.IntN(8) {
			case 0:
				pod.DeletionTimestamp = &metav1.Time{Time: gpusharetest.Epoch()}
			case 1, 2:
				for _, c := range pod.Spec.InitContainers {
					pod.Status.InitContainerStatuses = append(pod.Status.InitContainerStatuses, corev1.ContainerStatus{Name: c.Name,
						State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}}})
				}
			case 3:
				pod.Status.Phase = corev1.PodSucceeded
			}
			key := pod.Namespace + "/" + pod.Name
			if rng.IntN(12) == 0 {
				w.ledger.DeletePod(pod.Namespace, pod.Name)
				cache.Delete(key)
				delete(seen, key)
			} else {
				_ = w.ledger.SetPod(pod)
				if seen[key] {
					cache.Update(handlerEvent(pod))
				} else {
					cache.Add(handlerEvent(pod))
				}
				seen[key] = true
			}
			for j, p := range pods {
				if p.Name == pod.Name {
					pods[j] = pod
				}
			}
			var held []hamiref.Held
			for _, h := range cache.Held() {
				held = append(held, h)
			}
			ref := w.refNodes()
			hamiref.Recount(ref, held, true)
			cases++
			var bad []string
			for _, rn := range ref {
				nu, _ := w.ledger.Node(rn.Name)
				for _, rd := range rn.Devices {
					for _, g := range nu.GPUs {
						if want := (gpushare.Amount{Slots: int64(rd.Used), MemoryMiB: int64(rd.Usedmem), Cores: int64(rd.Usedcores)}); g.ID == rd.ID && g.Used != want {
							bad = append(bad, fmt.Sprintf("%s %+v, HAMi %+v", g.ID, g.Used, want))
						}
					}
				}
			}
			if len(bad) == 0 {
				agree++
			} else if len(diffs) < 5 {
				diffs = append(diffs, fmt.Sprintf("seed %d event %d (%s %s): %s", seed, i, key, pod.Annotations[gpushare.AnnotationAllocated], strings.Join(bad, "; ")))
			}
		}
	}
	t.Logf("pod handler: %d/%d states agree %v", agree, cases, diffs)
	require.Equal(t, cases, agree, "%v", diffs)
}
