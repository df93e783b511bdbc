package hamisim_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/cozystack/tenantkit/gpushare"
	"github.com/cozystack/tenantkit/gpushare/hamisim"
	"github.com/cozystack/tenantkit/gpushare/live"
)

func gpuPod(name string, memMiB int64) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: name},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Resources: corev1.ResourceRequirements{
			Limits: corev1.ResourceList{gpushare.ResourceGPU: resource.MustParse("1"),
				gpushare.ResourceMemory: *resource.NewQuantity(memMiB, resource.DecimalSI)}}}}}}
}

// Bind leaves what HAMi's scheduler leaves, and the ledger, reading the
// cluster through informers, counts it.
func TestBind(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cs := fake.NewClientset()
	require.NoError(t, hamisim.RegisterNode(ctx, cs, "gpu-1", hamisim.GPUs("t4", 2, "NVIDIA-Tesla T4", 15360)))
	l, err := gpushare.NewLedger(gpushare.Config{})
	require.NoError(t, err)
	require.NoError(t, live.Watch(ctx, cs, l))

	p, err := hamisim.Bind(ctx, cs, l, gpuPod("a", 10000))
	require.NoError(t, err)
	require.Equal(t, "gpu-1", p.Node)
	require.Equal(t, "GPU-t4-1", p.Containers[0][0].UUID, "two idle cards: HAMi takes the one registered last")
	got, err := cs.CoreV1().Pods("ml").Get(ctx, "a", metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, "gpu-1", got.Spec.NodeName)
	require.Equal(t, corev1.PodRunning, got.Status.Phase)
	require.Equal(t, p.Containers.String(), got.Annotations[gpushare.AnnotationAllocated])
	require.Equal(t, string(gpushare.BindSuccess), got.Annotations[gpushare.AnnotationBindPhase])
	require.EqualValues(t, 10000, l.Summary().Used.MemoryMiB)

	// GPU spread: the second pod takes the other card; a third does not fit.
	p, err = hamisim.Bind(ctx, cs, l, gpuPod("b", 10000))
	require.NoError(t, err)
	require.Equal(t, "GPU-t4-0", p.Containers[0][0].UUID)
	_, err = hamisim.Bind(ctx, cs, l, gpuPod("c", 10000))
	require.ErrorIs(t, err, gpushare.ErrNoFit)
	_, err = cs.CoreV1().Pods("ml").Get(ctx, "c", metav1.GetOptions{})
	require.Error(t, err, "a pod that does not fit is not created")
}
