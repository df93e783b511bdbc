package gpushare_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cozystack/tenantkit/gpushare"
	"github.com/cozystack/tenantkit/gpushare/gpusharetest"
)

func quota(ns, name string, hard map[string]string) *corev1.ResourceQuota {
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{}}}
	for k, v := range hard {
		q.Spec.Hard[corev1.ResourceName(k)] = resource.MustParse(v)
	}
	return q
}

const memKey, coresKey = "limits.nvidia.com/gpumem", "limits.nvidia.com/gpucores"

// quotaLedger has two idle 80 GiB A100s on one node and, in namespace
// "new", a pod holding 20000 MiB and 30 cores of the first.
func quotaLedger(t *testing.T, cfg gpushare.Config) *gpushare.Ledger {
	held := gpushare.Placement{Namespace: "new", Name: "held", Node: "n",
		Containers: gpushare.PodAllocation{{share("GPU-n-0", 20000, 30)}}}
	return newLedger(t, cfg, []*corev1.Node{gpusharetest.NodeT(t, "n", gpusharetest.GPUs("n", 2, a100Type, 81920)...)}, held)
}

func TestQuotaFit(t *testing.T) {
	type step struct {
		set    *corev1.ResourceQuota
		delete string
	}
	cases := []struct {
		name  string
		cfg   gpushare.Config
		steps []step
		ctr   gpushare.ContainerRequest
		want  *gpushare.QuotaExceeded // nil: fits
	}{
		{name: "no quota", ctr: gpushare.ContainerRequest{Count: 1, MemoryMiB: 70000}},
		{name: "memory over", steps: []step{{set: quota("new", "q", map[string]string{memKey: "30000"})}},
			ctr:  gpushare.ContainerRequest{Count: 1, MemoryMiB: 16000},
			want: &gpushare.QuotaExceeded{Namespace: "new", Resource: memKey, Limit: 30000, Used: 20000, Asked: 16000}},
		{name: "memory exactly at the limit", steps: []step{{set: quota("new", "q", map[string]string{memKey: "36000"})}},
			ctr: gpushare.ContainerRequest{Count: 1, MemoryMiB: 16000}},
		{name: "two GPUs, the second over", steps: []step{{set: quota("new", "q", map[string]string{memKey: "45000"})}},
			ctr:  gpushare.ContainerRequest{Count: 2, MemoryMiB: 15000},
			want: &gpushare.QuotaExceeded{Namespace: "new", Resource: memKey, Limit: 45000, Used: 20000, Asked: 30000}},
		{name: "percentage resolved on the card", steps: []step{{set: quota("new", "q", map[string]string{memKey: "60000"})}},
			ctr:  gpushare.ContainerRequest{Count: 1, MemoryPercent: 50},
			want: &gpushare.QuotaExceeded{Namespace: "new", Resource: memKey, Limit: 60000, Used: 20000, Asked: 40960}},
		{name: "memory factor multiplies the limit", cfg: gpushare.Config{MemoryFactor: 2},
			steps: []step{{set: quota("new", "q", map[string]string{memKey: "18000"})}},
			ctr:   gpushare.ContainerRequest{Count: 1, MemoryMiB: 16000}},
		{name: "explicit zero blocks", steps: []step{{set: quota("new", "q", map[string]string{coresKey: "0"})}},
			ctr:  gpushare.ContainerRequest{Count: 1, MemoryMiB: 1000, Cores: 10},
			want: &gpushare.QuotaExceeded{Namespace: "new", Resource: coresKey, Limit: 0, Used: 30, Asked: 10}},
		{name: "requests. keys and fractions are not HAMi's",
			steps: []step{{set: quota("new", "q", map[string]string{"requests.nvidia.com/gpumem": "1", coresKey: "500m"})}},
			ctr:   gpushare.ContainerRequest{Count: 1, MemoryMiB: 16000, Cores: 10}},
		{name: "another namespace's quota", steps: []step{{set: quota("other", "q", map[string]string{memKey: "0"})}},
			ctr: gpushare.ContainerRequest{Count: 1, MemoryMiB: 16000}},
		{name: "update replaces the keys",
			steps: []step{{set: quota("new", "q", map[string]string{memKey: "1"})}, {set: quota("new", "q", map[string]string{coresKey: "35"})}},
			ctr:   gpushare.ContainerRequest{Count: 1, MemoryMiB: 16000, Cores: 10},
			want:  &gpushare.QuotaExceeded{Namespace: "new", Resource: coresKey, Limit: 35, Used: 30, Asked: 10}},
		{name: "deleting one of two quotas unsets the key",
			steps: []step{{set: quota("new", "a", map[string]string{memKey: "1"})}, {set: quota("new", "b", map[string]string{memKey: "2"})}, {delete: "b"}},
			ctr:   gpushare.ContainerRequest{Count: 1, MemoryMiB: 16000}},
		{name: "the last quota set wins",
			steps: []step{{set: quota("new", "a", map[string]string{memKey: "100000"})}, {set: quota("new", "b", map[string]string{memKey: "2"})}},
			ctr:   gpushare.ContainerRequest{Count: 1, MemoryMiB: 16000},
			want:  &gpushare.QuotaExceeded{Namespace: "new", Resource: memKey, Limit: 2, Used: 20000, Asked: 16000}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := quotaLedger(t, tc.cfg)
			for _, s := range tc.steps {
				if s.set != nil {
					l.SetResourceQuota(s.set)
				} else {
					l.DeleteResourceQuota("new", s.delete)
				}
			}
			_, err := l.Fit(ask("p", tc.ctr))
			if tc.want == nil {
				require.NoError(t, err)
				return
			}
			var fe *gpushare.FitError
			require.ErrorAs(t, err, &fe)
			require.Equal(t, gpushare.BlockQuota, fe.Blocker.Kind)
			require.Equal(t, tc.want, fe.Blocker.Quota)
			require.Equal(t, gpushare.ReasonResourceQuotaNotFit, fe.Nodes[0].GPUs[0].Reason)
			require.Contains(t, err.Error(), tc.want.String())
		})
	}
}

func TestQuotaUsageFollowsPods(t *testing.T) {
	l := quotaLedger(t, gpushare.Config{})
	l.SetResourceQuota(quota("new", "q", map[string]string{memKey: "30000"}))
	require.Equal(t, gpushare.QuotaLimit{Resource: memKey, Limit: 30000, Set: true, Used: 20000}, l.Quota("new").Memory)
	req := ask("p", gpushare.ContainerRequest{Count: 1, MemoryMiB: 16000})
	_, err := l.Fit(req)
	require.ErrorIs(t, err, gpushare.ErrNoFit)

	// The held pod finishes: HAMi's RmUsage frees its share.
	done := gpusharetest.AllocatedPodT(t, gpushare.Placement{Namespace: "new", Name: "held", Node: "n",
		Containers: gpushare.PodAllocation{{share("GPU-n-0", 20000, 30)}}})
	done.Status.Phase = corev1.PodSucceeded
	require.NoError(t, l.SetPod(done))
	require.Equal(t, int64(0), l.Quota("new").Memory.Used)
	pl, err := l.Fit(req)
	require.NoError(t, err)

	// Allocate checks the quota again: a quota set since the Fit refuses.
	l.SetResourceQuota(quota("new", "q", map[string]string{memKey: "10000"}))
	err = l.Allocate(pl)
	var ae *gpushare.AllocationError
	require.ErrorAs(t, err, &ae)
	require.ErrorIs(t, err, gpushare.ErrQuotaExceeded)
	require.Equal(t, &gpushare.QuotaExceeded{Namespace: "new", Resource: memKey, Limit: 10000, Used: 0, Asked: 16000}, ae.Quota)

	l.DeleteResourceQuota("new", "q")
	require.NoError(t, l.Allocate(pl))
	require.Equal(t, int64(16000), l.Quota("new").Memory.Used)
	require.False(t, l.Quota("new").Memory.Set)
}

func TestQuotaWhatIf(t *testing.T) {
	l := quotaLedger(t, gpushare.Config{})
	l.SetResourceQuota(quota("new", "q", map[string]string{memKey: "60000"}))
	w, err := l.WhatIf(ask("p", gpushare.ContainerRequest{Count: 1, MemoryMiB: 10000}), 0)
	require.NoError(t, err)
	require.Equal(t, 4, w.Fits)
	require.NotNil(t, w.Next)
	require.Equal(t, gpushare.BlockQuota, w.Next.Blocker.Kind)
	require.Equal(t, int64(20000), l.Quota("new").Memory.Used, "what-if leaves the ledger alone")
}

// TestQuotaInitContainers follows HAMi v2.10's phases: an init container
// is checked against the init containers only, an app container against
// the app containers only, and usage counts the collapsed pod.
func TestQuotaInitContainers(t *testing.T) {
	cfg := gpushare.Config{CollapseInitContainers: true}
	l := quotaLedger(t, cfg)
	l.SetResourceQuota(quota("new", "q", map[string]string{memKey: "50000"}))
	req := ask("p",
		gpushare.ContainerRequest{Name: "init", Init: true, Count: 1, MemoryMiB: 30000},
		gpushare.ContainerRequest{Name: "app", Count: 1, MemoryMiB: 30000})
	pl, err := l.Fit(req)
	require.NoError(t, err, "each phase alone asks 30000 of the 30000 left")
	require.NoError(t, l.Allocate(pl))
	// Placed on one GPU, the collapsed pod holds max(30000, 30000).
	require.Equal(t, int64(50000), l.Quota("new").Memory.Used)
}
