package gpusharetest_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cozystack/tenantkit/gpushare"
	"github.com/cozystack/tenantkit/gpushare/gpusharetest"
)

func TestFixturesAreWhatHAMiWrites(t *testing.T) {
	node := gpusharetest.Node(t, "n", gpusharetest.GPUs("n", 2, "NVIDIA L4", 23034)...)
	devs, err := gpushare.DecodeNodeDevices(node.Annotations[gpushare.AnnotationRegister])
	require.NoError(t, err)
	require.Len(t, devs, 2)
	q := node.Status.Allocatable[gpushare.ResourceGPU]
	require.Equal(t, int64(20), q.Value(), "GPUs × split count")

	p := gpushare.Placement{Namespace: "ns", Name: "p", Node: "n", InitContainers: 1, Containers: gpushare.PodAllocation{
		{}, {{UUID: "GPU-n-1", Type: gpushare.VendorNVIDIA, MemoryMiB: 1000, Cores: 10}}}}
	pod := gpusharetest.AllocatedPod(t, p)
	require.True(t, gpushare.Counts(pod))
	require.Equal(t, ";GPU-n-1,NVIDIA,1000,10:;", pod.Annotations[gpushare.AnnotationAllocated])
	require.Len(t, pod.Spec.InitContainers, 1)
	require.Len(t, pod.Spec.Containers, 1)

	req, err := gpushare.NewPodRequest(gpusharetest.Pod("ns", "q", gpusharetest.Container("c", 2, 4000, 0)), gpushare.Config{})
	require.NoError(t, err)
	require.Equal(t, []gpushare.ContainerRequest{{Name: "c", Count: 2, MemoryMiB: 4000}}, req.Containers)
}

func TestClusterRespectsCapacity(t *testing.T) {
	nodes, pods := gpusharetest.Cluster(t, gpusharetest.ClusterConfig{Nodes: 6, GPUsPerNode: 2, Pods: 60, Seed: 3})
	again, _ := gpusharetest.Cluster(t, gpusharetest.ClusterConfig{Nodes: 6, GPUsPerNode: 2, Pods: 60, Seed: 3})
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
