package gpusharetest_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cozystack/tenantkit/gpushare"
	"github.com/cozystack/tenantkit/gpushare/gpusharetest"
)

func TestFixturesAreWhatHAMiWrites(t *testing.T) {
	node := gpusharetest.NodeT(t, "n", gpusharetest.GPUs("n", 2, "NVIDIA L4", 23034)...)
	devs, err := gpushare.DecodeNodeDevices(node.Annotations[gpushare.AnnotationRegister])
	require.NoError(t, err)
	require.Len(t, devs, 2)
	q := node.Status.Allocatable[gpushare.ResourceGPU]
	require.Equal(t, int64(20), q.Value(), "GPUs × split count")

	p := gpushare.Placement{Namespace: "ns", Name: "p", Node: "n", InitContainers: 1, Containers: gpushare.PodAllocation{
		{}, {{UUID: "GPU-n-1", Type: gpushare.VendorNVIDIA, MemoryMiB: 1000, Cores: 10}}}}
	pod := gpusharetest.AllocatedPodT(t, p)
	require.True(t, gpushare.Counts(pod))
	// HAMi writes no placeholder for the GPU-less init container on a node
	// whose devices are registered by model (score.go's placeholders go
	// under the models, PatchAnnotations writes the "NVIDIA" list).
	require.Equal(t, "GPU-n-1,NVIDIA,1000,10:;", pod.Annotations[gpushare.AnnotationAllocated])
	require.Len(t, pod.Spec.InitContainers, 1)
	require.Len(t, pod.Spec.Containers, 1)

	req, err := gpushare.NewPodRequest(gpusharetest.Pod("ns", "q", gpusharetest.Container("c", 2, 4000, 0)), gpushare.Config{})
	require.NoError(t, err)
	require.Equal(t, []gpushare.ContainerRequest{{Name: "c", Count: 2, MemoryMiB: 4000}}, req.Containers)
}

func TestClusterRespectsCapacity(t *testing.T) {
	nodes, pods := gpusharetest.ClusterT(t, gpusharetest.ClusterConfig{Nodes: 6, GPUsPerNode: 2, Pods: 60, Seed: 3})
	again, _ := gpusharetest.ClusterT(t, gpusharetest.ClusterConfig{Nodes: 6, GPUsPerNode: 2, Pods: 60, Seed: 3})
	require.Equal(t, nodes, again, "same seed, same cluster")
	l, err := gpushare.NewLedger(gpushare.Config{})
	require.NoError(t, err)
	require.NoError(t, l.Load(nodes, pods))
	require.Equal(t, 60, l.Summary().Pods)
	for _, n := range l.Nodes() {
		for _, g := range n.GPUs {
			require.False(t, g.Overcommitted, g.ID)
		}
	}
}

// The error-returning forms need no test and report bad input.
func TestConstructorsWithoutTB(t *testing.T) {
	n, err := gpusharetest.Node("n", gpusharetest.GPU("GPU-a", 0, "NVIDIA L4", 23034))
	require.NoError(t, err)
	require.Equal(t, "n", n.Name)
	_, err = gpusharetest.NodeIn(gpushare.FormatFields9, "n", gpusharetest.GPU("GPU,a", 0, "NVIDIA L4", 23034))
	require.ErrorIs(t, err, gpushare.ErrUnencodable)
	_, err = gpusharetest.AllocatedPod(gpushare.Placement{Name: "p"})
	require.ErrorIs(t, err, gpusharetest.ErrIncompletePlacement)
	_, _, err = gpusharetest.Cluster(gpusharetest.ClusterConfig{Nodes: 1, GPUsPerNode: 1, Pods: 1000})
	require.ErrorIs(t, err, gpusharetest.ErrClusterTooSmall)
	nodes, pods, err := gpusharetest.Cluster(gpusharetest.ClusterConfig{Nodes: 2, GPUsPerNode: 1, Pods: 3})
	require.NoError(t, err)
	require.Len(t, nodes, 2)
	require.Len(t, pods, 3)
}
