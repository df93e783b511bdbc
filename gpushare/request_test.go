package gpushare_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/cozystack/tenantkit/gpushare"
)

func limits(kv ...string) corev1.ResourceRequirements {
	l := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return corev1.ResourceRequirements{Limits: l}
}

func TestNewPodRequest(t *testing.T) {
	const (
		gpu  = gpushare.ResourceGPU
		mem  = gpushare.ResourceMemory
		pct  = gpushare.ResourceMemoryPercentage
		core = gpushare.ResourceCores
	)
	for _, tc := range []struct {
		name string
		cfg  gpushare.Config
		res  corev1.ResourceRequirements
		want gpushare.ContainerRequest
	}{
		{"count only: whole memory, exclusive cores (v2.7+ webhook)", gpushare.Config{},
			limits(gpu, "1"), gpushare.ContainerRequest{Count: 1, MemoryPercent: 100, Cores: 100}},
		{"count only without webhook: whole memory, defaultCores", gpushare.Config{SkipWebhook: true},
			limits(gpu, "1"), gpushare.ContainerRequest{Count: 1, MemoryPercent: 100}},
		{"Cozystack's example", gpushare.Config{},
			limits(gpu, "1", mem, "3000", core, "30"), gpushare.ContainerRequest{Count: 1, MemoryMiB: 3000, Cores: 30}},
		{"gpumem wins over percentage", gpushare.Config{},
			limits(gpu, "2", mem, "3000", pct, "50"), gpushare.ContainerRequest{Count: 2, MemoryMiB: 3000, MemoryPercent: 50}},
		{"percentage 100 without cores is exclusive", gpushare.Config{},
			limits(gpu, "1", pct, "100"), gpushare.ContainerRequest{Count: 1, MemoryPercent: 100, Cores: 100}},
		{"percentage 50 is not", gpushare.Config{},
			limits(gpu, "1", pct, "50"), gpushare.ContainerRequest{Count: 1, MemoryPercent: 50}},
		{"percentage 0 is unset (HAMi's 101)", gpushare.Config{},
			limits(gpu, "1", pct, "0", core, "10"), gpushare.ContainerRequest{Count: 1, MemoryPercent: 100, Cores: 10}},
		{"webhook adds defaultGPUNum", gpushare.Config{},
			limits(mem, "2048"), gpushare.ContainerRequest{Count: 1, MemoryMiB: 2048}},
		{"without webhook a memory-only container asks no GPU", gpushare.Config{SkipWebhook: true},
			limits(mem, "2048"), gpushare.ContainerRequest{}},
		{"defaultMemory", gpushare.Config{DefaultMemoryMiB: 4096, DefaultCores: 5},
			limits(gpu, "1", core, "0"), gpushare.ContainerRequest{Count: 1, MemoryMiB: 4096}},
		{"defaultCores when no webhook default applies", gpushare.Config{DefaultCores: 5},
			limits(gpu, "1", mem, "100"), gpushare.ContainerRequest{Count: 1, MemoryMiB: 100, Cores: 5}},
		{"memoryFactor", gpushare.Config{MemoryFactor: 1024},
			limits(gpu, "1", mem, "3", core, "1"), gpushare.ContainerRequest{Count: 1, MemoryMiB: 3072, Cores: 1}},
		{"requests when limits are absent", gpushare.Config{},
			corev1.ResourceRequirements{Requests: limits(gpu, "1", mem, "512", core, "1").Limits},
			gpushare.ContainerRequest{Count: 1, MemoryMiB: 512, Cores: 1}},
		{"zero GPUs", gpushare.Config{}, limits(gpu, "0", mem, "10"), gpushare.ContainerRequest{}},
		{"no GPU resources", gpushare.Config{}, limits("cpu", "1"), gpushare.ContainerRequest{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: tc.res}}}}
			r, err := gpushare.NewPodRequest(pod, tc.cfg)
			require.NoError(t, err)
			tc.want.Name = "c"
			require.Equal(t, []gpushare.ContainerRequest{tc.want}, r.Containers)
		})
	}
}

func TestNewPodRequestInitFirstAndAnnotations(t *testing.T) {
	pod := &corev1.Pod{}
	pod.Namespace, pod.Name = "ml", "train"
	pod.Annotations = map[string]string{
		gpushare.AnnotationUseGPUType:     "A100, H100",
		gpushare.AnnotationNoUseGPUUUID:   "GPU-bad",
		gpushare.AnnotationNUMABind:       "true",
		gpushare.AnnotationNodePolicy:     "spread",
		gpushare.AnnotationGPUPolicy:      "mutex,binpack",
		gpushare.AnnotationScoringWeights: "slot=0,core=1,memory=2",
	}
	pod.Spec.InitContainers = []corev1.Container{{Name: "fetch", Resources: limits(gpushare.ResourceGPU, "1", gpushare.ResourceMemory, "1000")}}
	pod.Spec.Containers = []corev1.Container{{Name: "sidecar"}, {Name: "main", Resources: limits(gpushare.ResourceGPU, "2", gpushare.ResourceMemory, "8000")}}
	r, err := gpushare.NewPodRequest(pod, gpushare.Config{})
	require.NoError(t, err)
	require.Equal(t, []gpushare.ContainerRequest{
		{Name: "fetch", Init: true, Count: 1, MemoryMiB: 1000},
		{Name: "sidecar"},
		{Name: "main", Count: 2, MemoryMiB: 8000},
	}, r.Containers)
	require.Equal(t, 3, r.GPUs())
	require.Equal(t, []string{"A100", "H100"}, r.Selectors.UseTypes)
	require.Equal(t, []string{"GPU-bad"}, r.Selectors.NoUseUUIDs)
	require.True(t, r.Selectors.NUMABind)
	require.Equal(t, gpushare.NodeSpread, r.NodePolicy)
	require.Equal(t, gpushare.GPUPolicy("mutex,binpack"), r.GPUPolicy)
	require.Equal(t, gpushare.Weights{Slot: 0, Core: 1, Memory: 2}, r.Weights)
}

// TestNewPodRequestStrict: with StrictRequests, what HAMi bends is refused.
func TestNewPodRequestStrict(t *testing.T) {
	for _, tc := range []struct {
		name     string
		res      corev1.ResourceRequirements
		annos    map[string]string
		resource string
	}{
		{"fractional gpumem", limits(gpushare.ResourceGPU, "1", gpushare.ResourceMemory, "1.5"), nil, gpushare.ResourceMemory},
		{"gpumem overflows int32", limits(gpushare.ResourceGPU, "1", gpushare.ResourceMemory, "3Gi"), nil, gpushare.ResourceMemory},
		{"percentage over 100", limits(gpushare.ResourceGPU, "1", gpushare.ResourceMemoryPercentage, "101"), nil, gpushare.ResourceMemoryPercentage},
		{"cores over 100", limits(gpushare.ResourceGPU, "1", gpushare.ResourceCores, "150"), nil, gpushare.ResourceCores},
		{"fractional GPUs", limits(gpushare.ResourceGPU, "500m"), nil, gpushare.ResourceGPU},
		{"unknown GPU policy", limits(gpushare.ResourceGPU, "1"), map[string]string{gpushare.AnnotationGPUPolicy: "pack"}, gpushare.AnnotationGPUPolicy},
		{"unknown node policy", limits(gpushare.ResourceGPU, "1"), map[string]string{gpushare.AnnotationNodePolicy: "fill"}, gpushare.AnnotationNodePolicy},
		{"weights all zero", limits(gpushare.ResourceGPU, "1"), map[string]string{gpushare.AnnotationScoringWeights: "slot=0,core=0,memory=0"}, gpushare.AnnotationScoringWeights},
		{"numa-bind not a bool", limits(gpushare.ResourceGPU, "1"), map[string]string{gpushare.AnnotationNUMABind: "yes please"}, gpushare.AnnotationNUMABind},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Resources: tc.res}}}}
			pod.Namespace, pod.Name, pod.Annotations = "ns", "p", tc.annos
			_, err := gpushare.NewPodRequest(pod, gpushare.Config{StrictRequests: true, SkipWebhook: tc.resource == gpushare.ResourceMemoryPercentage})
			require.ErrorIs(t, err, gpushare.ErrInvalidRequest)
			var re *gpushare.RequestError
			require.ErrorAs(t, err, &re)
			require.Equal(t, tc.resource, re.Resource)
			require.Equal(t, "ns/p", re.Pod)
			if tc.annos == nil {
				require.Equal(t, "main", re.Container)
				require.Contains(t, err.Error(), "container main")
			}
		})
	}
}

func TestPolicies(t *testing.T) {
	p, err := gpushare.ParseGPUPolicy(" numa,spread ")
	require.NoError(t, err)
	require.Equal(t, gpushare.GPUPolicy("numa,spread"), p)
	_, err = gpushare.ParseGPUPolicy("binpack,pack")
	require.ErrorIs(t, err, gpushare.ErrInvalidRequest)
	w, err := gpushare.ParseWeights("memory=3, slot=1,core=2")
	require.NoError(t, err)
	require.Equal(t, "slot=1,core=2,memory=3", w.String())
	for _, bad := range []string{"slot=1,core=2", "slot=1,core=2,memory=-1", "slot=1,slot=2,memory=1", "slot=1,core=2,mem=1", "slot=a,core=1,memory=1"} {
		_, err := gpushare.ParseWeights(bad)
		require.ErrorIs(t, err, gpushare.ErrInvalidRequest, bad)
	}
	_, err = gpushare.NewLedger(gpushare.Config{GPUPolicy: "pack"})
	require.ErrorIs(t, err, gpushare.ErrInvalidConfig)
}

// TestNewPodRequestBendsAsHAMi: by default NewPodRequest derives what
// HAMi v2.10's scheduler derives and lists the oddity as a warning naming
// the container, the resource and what HAMi does.
func TestNewPodRequestBendsAsHAMi(t *testing.T) {
	const (
		gpu  = gpushare.ResourceGPU
		mem  = gpushare.ResourceMemory
		pct  = gpushare.ResourceMemoryPercentage
		core = gpushare.ResourceCores
	)
	for _, tc := range []struct {
		name     string
		res      corev1.ResourceRequirements
		want     gpushare.ContainerRequest
		resource string
		says     string
	}{
		{"cores over 100 are clamped", limits(gpu, "1", mem, "1000", core, "150"),
			gpushare.ContainerRequest{Count: 1, MemoryMiB: 1000, Cores: 100}, core, "clamps it to 100"},
		{"percentage over 100 is clamped where no webhook refuses it", limits(gpu, "1", pct, "150", core, "10"),
			gpushare.ContainerRequest{Count: 1, MemoryPercent: 100, Cores: 10}, pct, "clamps it to 100"},
		{"gpumem beyond int32 drops the GPU request", limits(gpu, "1", mem, "2147483648"),
			gpushare.ContainerRequest{}, mem, "ignores the container's GPU request"},
		{"fractional gpumem drops the GPU request", limits(gpu, "1", mem, "1.5"),
			gpushare.ContainerRequest{}, mem, "ignores the container's GPU request"},
		{"fractional GPUs: no GPU request", limits(gpu, "500m"),
			gpushare.ContainerRequest{}, gpu, "ignores the container's GPU request"},
		{"cores beyond int32 are read as HAMi's conversion reads them", limits(gpu, "1", mem, "1000", core, "4294967396"),
			gpushare.ContainerRequest{Count: 1, MemoryMiB: 1000, Cores: 100}, core, "overflows int32: HAMi reads 100"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Resources: tc.res}}}}
			r, err := gpushare.NewPodRequest(pod, gpushare.Config{SkipWebhook: tc.resource == pct})
			require.NoError(t, err)
			tc.want.Name = "main"
			require.Equal(t, []gpushare.ContainerRequest{tc.want}, r.Containers)
			require.NotEmpty(t, r.Warnings)
			require.Equal(t, "main", r.Warnings[0].Container)
			require.Equal(t, tc.resource, r.Warnings[0].Resource)
			require.Contains(t, r.Warnings[0].Error(), tc.says)
		})
	}
}
