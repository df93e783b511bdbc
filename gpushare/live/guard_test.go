package live_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/cozystack/tenantkit/gpushare"
	"github.com/cozystack/tenantkit/gpushare/gpusharetest"
	"github.com/cozystack/tenantkit/gpushare/live"
)

// TestWatchGuards: no client, a second Watch of a ledger while the first
// runs, and a new Watch once the first has ended.
func TestWatchGuards(t *testing.T) {
	l, err := gpushare.NewLedger(gpushare.Config{})
	require.NoError(t, err)
	require.ErrorIs(t, live.Watch(t.Context(), nil, l), live.ErrNoClient)

	cs := fake.NewClientset(gpusharetest.NodeT(t, "gpu-1", gpusharetest.GPUs("t4", 2, t4Type, 15360)...))
	ctx, cancel := context.WithCancel(t.Context())
	require.NoError(t, live.Watch(ctx, cs, l))
	require.Equal(t, 2, l.Summary().GPUs, "the initial list is applied")
	require.ErrorIs(t, live.Watch(ctx, cs, l), live.ErrAlreadyWatched)

	other, err := gpushare.NewLedger(gpushare.Config{})
	require.NoError(t, err)
	require.NoError(t, live.Watch(ctx, cs, other), "another ledger may watch the same cluster")

	cancel()
	require.Eventually(t, func() bool {
		ctx2, cancel2 := context.WithCancel(t.Context())
		defer cancel2()
		return live.Watch(ctx2, cs, l) == nil
	}, 10*time.Second, 20*time.Millisecond, "once the first Watch ends, the ledger may be watched again")
}

// TestWatchFollows: a node the ledger has not seen, added after the sync,
// is followed; its deletion drops it.
func TestWatchFollows(t *testing.T) {
	cs := fake.NewClientset()
	l, err := gpushare.NewLedger(gpushare.Config{})
	require.NoError(t, err)
	require.NoError(t, live.Watch(t.Context(), cs, l))
	require.Zero(t, l.Summary().Nodes)

	_, err = cs.CoreV1().Nodes().Create(t.Context(), gpusharetest.NodeT(t, "gpu-1", gpusharetest.GPUs("a", 1, a100Type, 81920)...), metav1.CreateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { _, ok := l.Node("gpu-1"); return ok }, 10*time.Second, 10*time.Millisecond)
	require.NoError(t, cs.CoreV1().Nodes().Delete(t.Context(), "gpu-1", metav1.DeleteOptions{}))
	require.Eventually(t, func() bool { _, ok := l.Node("gpu-1"); return !ok }, 10*time.Second, 10*time.Millisecond)
}
