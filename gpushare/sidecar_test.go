package gpushare_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/cozystack/tenantkit/gpushare"
	"github.com/cozystack/tenantkit/gpushare/gpusharetest"
)

// TestSidecarInitContainers: HAMi v2.10 does not tell sidecars
// (restartPolicy: Always init containers) from other init containers —
// nothing under pkg/ reads an init container's restartPolicy;
// CollapseInitContainerUsage takes every spec.initContainers entry as an
// init entry (its TODO waits on HAMi PR #2584), and
// AllInitContainersSucceeded (pkg/util/util.go) releases them only once
// every init container exited 0. So a running sidecar's share is counted
// as an init container's (per GPU the larger of it and the app sum) and is
// never released while it runs; gpushare counts it the same way.
func TestSidecarInitContainers(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	l := newLedger(t, gpushare.Config{CollapseInitContainers: true},
		[]*corev1.Node{gpusharetest.NodeT(t, "n", gpusharetest.GPUs("n", 1, a100Type, 81920)...)})
	pod := gpusharetest.AllocatedPodT(t, gpushare.Placement{Namespace: "ns", Name: "p", Node: "n", InitContainers: 1,
		Containers: gpushare.PodAllocation{{share("GPU-n-0", 30000, 30)}, {share("GPU-n-0", 20000, 20)}}})
	pod.Spec.InitContainers[0].RestartPolicy = &always
	used := func() gpushare.Amount {
		nu, ok := l.Node("n")
		require.True(t, ok)
		return nu.GPUs[0].Used
	}
	require.NoError(t, l.SetPod(pod))
	require.Equal(t, gpushare.Amount{Slots: 1, MemoryMiB: 30000, Cores: 30}, used())

	// The sidecar runs beside the app container: still counted.
	pod.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "init-0",
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
	require.NoError(t, l.SetPod(pod))
	require.Equal(t, gpushare.Amount{Slots: 1, MemoryMiB: 30000, Cores: 30}, used())
	require.False(t, gpushare.InitContainersSucceeded(pod))

	// It exits 0: the init entries are released, as HAMi's onUpdatePod does.
	pod.Status.InitContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}}
	require.NoError(t, l.SetPod(pod))
	require.Equal(t, gpushare.Amount{Slots: 1, MemoryMiB: 20000, Cores: 20}, used())

	// NewPodRequest takes the sidecar as an init container, fitted alone.
	spec := gpusharetest.Pod("ns", "q", gpusharetest.Container("main", 1, 1000, 10))
	side := gpusharetest.Container("side", 1, 2000, 10)
	side.RestartPolicy = &always
	spec.Spec.InitContainers = []corev1.Container{side}
	req, err := gpushare.NewPodRequest(spec, gpushare.Config{})
	require.NoError(t, err)
	require.True(t, req.Containers[0].Init)
	require.Equal(t, "side", req.Containers[0].Name)
}
