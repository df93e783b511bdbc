package gpushare_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/cozystack/tenantkit/gpushare"
	"github.com/cozystack/tenantkit/gpushare/gpusharetest"
)

// The benchmark cluster of issue 4: 5,000 nodes × 8 GPUs, 100,000 pods,
// built once per test binary.
var (
	bigOnce  sync.Once
	bigNodes []corev1.Node
	bigPods  []corev1.Pod
	bigErr   error
)

func bigCluster(b *testing.B) ([]corev1.Node, []corev1.Pod) {
	bigOnce.Do(func() {
		bigNodes, bigPods, bigErr = gpusharetest.Cluster(gpusharetest.ClusterConfig{Nodes: 5000, GPUsPerNode: 8, Pods: 100_000, Namespaces: 50, Seed: 1})
	})
	if bigErr != nil {
		b.Fatal(bigErr)
	}
	return bigNodes, bigPods
}

func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// BenchmarkLedgerBuild builds the ledger of the big cluster from its Node
// and Pod objects. The baseline only decodes the same annotations (every
// registration and allocation string), the floor any builder pays.
func BenchmarkLedgerBuild(b *testing.B) {
	nodes, pods := bigCluster(b)
	b.Run("baseline", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for i := range nodes {
				if _, err := gpushare.DecodeNodeDevices(nodes[i].Annotations[gpushare.AnnotationRegister]); err != nil {
					b.Fatal(err)
				}
			}
			for i := range pods {
				if _, err := gpushare.DecodePodDevices(pods[i].Annotations[gpushare.AnnotationAllocated]); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("ledger", func(b *testing.B) {
		b.ReportAllocs()
		var mb float64
		for b.Loop() {
			b.StopTimer()
			before := heapInUse()
			b.StartTimer()
			l, err := gpushare.NewLedger(gpushare.Config{})
			if err != nil {
				b.Fatal(err)
			}
			if err := l.Load(nodes, pods); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			mb = float64(heapInUse()-before) / (1 << 20)
			runtime.KeepAlive(l)
			b.StartTimer()
		}
		b.ReportMetric(mb, "MB-heap")
	})
}

// shapes is a stream of new pods: mostly one GPU, sometimes two, 1–16 GiB
// and 0–30 cores each.
func shapes(n int) []gpushare.PodRequest {
	rng := rand.New(rand.NewPCG(7, 7))
	out := make([]gpushare.PodRequest, n)
	for i := range out {
		out[i] = gpushare.PodRequest{Namespace: "bench", Name: fmt.Sprintf("new-%d", i),
			Containers: []gpushare.ContainerRequest{{Name: "main", Count: int32(1 + rng.IntN(10)/9),
				MemoryMiB: int32(1024 << rng.IntN(5)), Cores: int32(10 * rng.IntN(4))}}}
	}
	return out
}

// BenchmarkPlace places a stream of new pods on the big cluster, releasing
// each pod 1,000 placements later so the cluster stays at its size; an op
// is one placement (plus, after the first thousand, one release). The
// baseline fits every node without the index and takes the best by policy.
func BenchmarkPlace(b *testing.B) {
	nodes, pods := bigCluster(b)
	stream := shapes(1 << 16)
	for _, policy := range []gpushare.NodePolicy{gpushare.NodeBinpack, gpushare.NodeSpread} {
		l, err := gpushare.NewLedger(gpushare.Config{NodePolicy: policy})
		if err != nil {
			b.Fatal(err)
		}
		if err := l.Load(nodes, pods); err != nil {
			b.Fatal(err)
		}
		run := func(b *testing.B, place func(gpushare.PodRequest) (gpushare.Placement, error)) {
			b.ReportAllocs()
			var ring [1000]gpushare.Placement
			i := 0
			for b.Loop() {
				r := stream[i%len(stream)]
				r.Name = fmt.Sprint(i) // unique
				p, err := place(r)
				if err != nil && !errors.Is(err, gpushare.ErrNoFit) {
					b.Fatal(err)
				}
				slot := &ring[i%len(ring)]
				if slot.Name != "" {
					l.Release(slot.Namespace, slot.Name)
				}
				*slot = p
				i++
			}
			for _, p := range ring {
				if p.Name != "" {
					l.Release(p.Namespace, p.Name)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "placements/s")
		}
		b.Run(string(policy)+"/baseline", func(b *testing.B) {
			run(b, func(r gpushare.PodRequest) (gpushare.Placement, error) {
				p, err := l.FitNaive(r)
				if err == nil {
					err = l.Allocate(p)
				}
				return p, err
			})
		})
		b.Run(string(policy)+"/ledger", func(b *testing.B) { run(b, l.Place) })
	}
}
