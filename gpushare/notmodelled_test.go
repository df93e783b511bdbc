package gpushare_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/cozystack/tenantkit/gpushare"
	"github.com/cozystack/tenantkit/gpushare/gpusharetest"
)

// TestNotModelled: where HAMi decides by a part of its procedure gpushare
// does not model, Fit refuses with a named reason instead of answering
// differently.
func TestNotModelled(t *testing.T) {
	four := []*corev1.Node{gpusharetest.NodeT(t, "four", gpusharetest.GPUs("four", 4, a100Type, 81920)...)}
	migDevs := gpusharetest.GPUs("mig", 2, a100Type, 81920)
	migDevs[1].Mode = gpushare.ModeMIG
	withMIG := append([]*corev1.Node{gpusharetest.NodeT(t, "a-mig", migDevs...)}, four...)
	topo := func(count int32) gpushare.PodRequest {
		r := ask("p", gpushare.ContainerRequest{Count: count, MemoryMiB: 1000})
		r.GPUPolicy = gpushare.GPUTopologyAware
		return r
	}
	cases := []struct {
		name    string
		nodes   []*corev1.Node
		quota   bool
		req     gpushare.PodRequest
		feature string // "" means Fit answers
	}{
		{name: "topology-aware, more GPUs fit than asked", nodes: four, req: topo(2), feature: gpushare.FeatureTopologyAware},
		{name: "topology-aware, exactly as many fit", nodes: four, req: topo(4)},
		{name: "topology-aware with a quota", nodes: four, quota: true, req: topo(4), feature: gpushare.FeatureTopologyAware},
		{name: "MIG GPU on a node ranked first", nodes: withMIG, req: ask("p", gpushare.ContainerRequest{Count: 1, MemoryMiB: 1000}),
			feature: gpushare.FeatureDynamicMIG},
		{name: "no MIG, no topology", nodes: four, req: ask("p", gpushare.ContainerRequest{Count: 1, MemoryMiB: 1000})},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := newLedger(t, gpushare.Config{}, tc.nodes)
			if tc.quota {
				l.SetResourceQuota(quota("new", "q", map[string]string{memKey: "100000"}))
			}
			_, err := l.Fit(tc.req)
			if tc.feature == "" {
				require.NoError(t, err)
				return
			}
			var ne *gpushare.NotModelledError
			require.ErrorAs(t, err, &ne)
			require.ErrorIs(t, err, gpushare.ErrNotModelled)
			require.Equal(t, tc.feature, ne.Feature)
			require.Equal(t, "new/p", ne.Pod)
		})
	}
}
