package gpushare_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/cozystack/tenantkit/gpushare"
	"github.com/cozystack/tenantkit/gpushare/gpusharetest"
)

// TestConcurrentFitThenAllocate is the scheduler extender's split path
// under contention: 12 goroutines each Fit a random pod on a shared ledger
// of few GPUs, then Allocate the placement, which others may have made
// stale in between, and now and then release a pod. In every snapshot a
// watcher takes meanwhile, and at the end, no GPU is over its capacity, no
// card holding an exclusive (100-core) share holds anything else, and no
// share sits on an unhealthy GPU; at the end the ledger equals one rebuilt
// from the pods' objects.
func TestConcurrentFitThenAllocate(t *testing.T) {
	const workers = 12
	rounds := 3000
	if testing.Short() || raceEnabled {
		rounds = 600
	}
	var nodes []*corev1.Node
	for i := range 3 {
		devs := gpusharetest.GPUs(fmt.Sprintf("c%d", i), 3, a100Type, 81920)
		for j := range devs {
			devs[j].NUMA, devs[j].Count = j%2, int32(3+j)
		}
		devs[2].Health = i != 1
		nodes = append(nodes, gpusharetest.NodeT(t, fmt.Sprintf("node-%d", i), devs...))
	}
	l := newLedger(t, gpushare.Config{}, nodes)

	var committed, stale, noFit, snapshots atomic.Int64
	var broken atomic.Value
	done := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for {
			if err := sharingRulesHold(l.Nodes()); err != nil {
				broken.CompareAndSwap(nil, err)
			}
			snapshots.Add(1)
			select {
			case <-done:
				return
			default:
			}
		}
	}()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 99))
			var mine []gpushare.Placement
			for i := range rounds {
				if len(mine) > 0 && rng.IntN(3) == 0 {
					k := rng.IntN(len(mine))
					l.Release(mine[k].Namespace, mine[k].Name)
					mine = append(mine[:k], mine[k+1:]...)
				}
				r := ask(fmt.Sprintf("w%d-%d", w, i), gpushare.ContainerRequest{Count: int32(1 + rng.IntN(4)/3),
					MemoryMiB: int32(2048 << rng.IntN(4)), Cores: []int32{0, 0, 20, 100, 100}[rng.IntN(5)]})
				r.GPUPolicy = []gpushare.GPUPolicy{gpushare.GPUSpread, gpushare.GPUBinpack, "mutex,binpack"}[rng.IntN(3)]
				p, err := l.Fit(r)
				if errors.Is(err, gpushare.ErrNoFit) {
					noFit.Add(1)
					continue
				}
				if err != nil {
					t.Errorf("fit: %v", err)
					return
				}
				switch err := l.Allocate(p); {
				case err == nil:
					committed.Add(1)
					mine = append(mine, p)
				case errors.Is(err, gpushare.ErrOverAllocation), errors.Is(err, gpushare.ErrGPUConflict):
					stale.Add(1)
				default:
					t.Errorf("allocate: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(done)
	<-watched
	t.Logf("%d committed, %d stale placements refused, %d no-fit, %d snapshots checked",
		committed.Load(), stale.Load(), noFit.Load(), snapshots.Load())
	if err, _ := broken.Load().(error); err != nil {
		t.Fatal(err)
	}
	require.NoError(t, sharingRulesHold(l.Nodes()))
	require.Positive(t, committed.Load())
	require.Positive(t, stale.Load(), "contention must make some placements stale")

	var pods []corev1.Pod
	for _, pu := range l.Pods() {
		pods = append(pods, *gpusharetest.AllocatedPodT(t, gpushare.Placement{Namespace: pu.Namespace, Name: pu.Name,
			Node: pu.Node, Containers: pu.Allocation}))
	}
	var objs []corev1.Node
	for _, n := range nodes {
		objs = append(objs, *n)
	}
	fresh, err := gpushare.NewLedger(gpushare.Config{})
	require.NoError(t, err)
	require.NoError(t, fresh.Load(objs, pods))
	require.Equal(t, l.Nodes(), fresh.Nodes())
	require.Equal(t, l.Summary(), fresh.Summary())
}

// sharingRulesHold checks a snapshot: no GPU over capacity, no exclusive
// share beside another, no share on an unhealthy GPU.
func sharingRulesHold(nodes []gpushare.NodeUsage) error {
	for _, n := range nodes {
		for _, g := range n.GPUs {
			switch {
			case g.Overcommitted:
				return fmt.Errorf("GPU %s: %+v of %+v", g.ID, g.Used, g.Capacity)
			case len(g.Pods) > 0 && !g.Health:
				return fmt.Errorf("GPU %s is unhealthy and holds %v", g.ID, g.Pods)
			}
			for _, ps := range g.Pods {
				if ps.Used.Cores == 100 && g.Capacity.Cores == 100 && len(g.Pods) > 1 {
					return fmt.Errorf("GPU %s: the exclusive share of %s/%s shares the card: %v", g.ID, ps.Namespace, ps.Name, g.Pods)
				}
			}
		}
	}
	return nil
}
