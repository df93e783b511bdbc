package gpusharetest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/cozystack/tenantkit/gpushare"
)

// ClusterConfig shapes a synthetic cluster.
type ClusterConfig struct {
	// Nodes and GPUsPerNode size the cluster (defaults 10 and 8).
	Nodes, GPUsPerNode int
	// Pods is the number of allocated pods to place (default 0).
	Pods int
	// Namespaces spreads the pods over this many namespaces (default 10).
	Namespaces int
	// Seed makes the cluster reproducible.
	Seed uint64
}

// Model is a GPU model as HAMi's device plugin registers it.
type Model struct {
	// Type is the registered type (hami.io/node-nvidia-register's type).
	Type string
	// MemoryMiB is the card's memory.
	MemoryMiB int32
}

// Models returns the GPU models Cluster cycles through, by node: an A100
// 80GB, an L40S and a T4. Each call returns a new slice.
func Models() []Model {
	return []Model{
		{"NVIDIA A100-SXM4-80GB", 81920},
		{"NVIDIA L40S", 46068},
		{"NVIDIA-Tesla T4", 15360},
	}
}

// ErrClusterTooSmall is returned by Cluster when the pods asked for do not
// fit on the nodes.
var ErrClusterTooSmall = errors.New("gpusharetest: pods do not fit the cluster")

// Cluster returns GPU nodes (node-00000, …; models cycle through Models)
// and running pods with HAMi allocations that respect every GPU's
// capacity: shares of 1–2 GPUs, 1–16 GiB and 0–30 cores each, placed at
// random. The same config gives the same objects.
func Cluster(cfg ClusterConfig) ([]corev1.Node, []corev1.Pod, error) {
	if cfg.Nodes == 0 {
		cfg.Nodes = 10
	}
	if cfg.GPUsPerNode == 0 {
		cfg.GPUsPerNode = 8
	}
	if cfg.Namespaces == 0 {
		cfg.Namespaces = 10
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x9e3779b97f4a7c15))
	nodes := make([]corev1.Node, cfg.Nodes)
	free := make([][]gpushare.Amount, cfg.Nodes)
	devs := make([][]gpushare.Device, cfg.Nodes)
	models := Models()
	for i := range nodes {
		m := models[i%len(models)]
		devs[i] = GPUs(fmt.Sprintf("%05d", i), cfg.GPUsPerNode, m.Type, m.MemoryMiB)
		n, err := Node(fmt.Sprintf("node-%05d", i), devs[i]...)
		if err != nil {
			return nil, nil, err
		}
		nodes[i] = *n
		free[i] = make([]gpushare.Amount, cfg.GPUsPerNode)
		for g := range free[i] {
			free[i][g] = gpushare.Amount{Slots: 10, MemoryMiB: int64(m.MemoryMiB), Cores: 100}
		}
	}
	pods := make([]corev1.Pod, 0, cfg.Pods)
	for tries := 0; len(pods) < cfg.Pods; tries++ {
		if tries > 100*cfg.Pods+1000 {
			return nil, nil, fmt.Errorf("%d pods on %d nodes × %d GPUs: %w", cfg.Pods, cfg.Nodes, cfg.GPUsPerNode, ErrClusterTooSmall)
		}
		n := rng.IntN(cfg.Nodes)
		want := gpushare.Amount{Slots: 1, MemoryMiB: int64(1024 << rng.IntN(5)), Cores: int64(10 * rng.IntN(4))}
		count := 1 + rng.IntN(10)/9
		var ctr gpushare.ContainerAllocation
		for g := range free[n] {
			f := free[n][g]
			if len(ctr) < count && f.Slots >= 1 && f.MemoryMiB >= want.MemoryMiB && f.Cores >= want.Cores {
				ctr = append(ctr, gpushare.DeviceAllocation{UUID: devs[n][g].ID, Type: gpushare.VendorNVIDIA,
					MemoryMiB: int32(want.MemoryMiB), Cores: int32(want.Cores)})
			}
		}
		if len(ctr) < count {
			continue
		}
		for _, d := range ctr {
			g := int(devIndex(devs[n], d.UUID))
			free[n][g] = free[n][g].Sub(want)
		}
		p := gpushare.Placement{Namespace: fmt.Sprintf("team-%02d", len(pods)%cfg.Namespaces),
			Name: fmt.Sprintf("pod-%06d", len(pods)), Node: nodes[n].Name, Containers: gpushare.PodAllocation{ctr}}
		pod, err := AllocatedPod(p)
		if err != nil {
			return nil, nil, err
		}
		pods = append(pods, *pod)
	}
	return nodes, pods, nil
}

// ClusterT is Cluster that fails t on error.
func ClusterT(t testing.TB, cfg ClusterConfig) ([]corev1.Node, []corev1.Pod) {
	t.Helper()
	nodes, pods, err := Cluster(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return nodes, pods
}

func devIndex(devs []gpushare.Device, id string) uint {
	for _, d := range devs {
		if d.ID == id {
			return d.Index
		}
	}
	return 0
}
