package gpushare_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/cozystack/tenantkit/gpushare"
	"github.com/cozystack/tenantkit/gpushare/gpusharetest"
)

// TestNewPodRequest_webhookRefuses: by default (HAMi's webhook in the path,
// as Cozystack deploys it) a pod the webhook refuses is a *WebhookError,
// never a request, so it can never be reported as fitting; without the
// webhook the same pod is read as the scheduler reads it.
func TestNewPodRequest_webhookRefuses(t *testing.T) {
	const (
		gpu = gpushare.ResourceGPU
		pct = gpushare.ResourceMemoryPercentage
	)
	privileged := func(p *corev1.Pod) {
		p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: new(true)}
	}
	for _, tc := range []struct {
		name      string
		res       corev1.ResourceRequirements
		edit      func(*corev1.Pod)
		container string
		resource  string
		says      string
	}{
		// The input: 36 such pods the apiserver accepts.
		{"percentage 101", limits(gpu, "1", pct, "101"), nil, "main", pct, "101 (101) is not an integer between 0 and 100"},
		{"percentage on a GPU-less container", limits(gpu, "0", pct, "150"), nil, "main", pct, "not an integer between 0 and 100"},
		{"percentage rounded up past 100", limits(gpu, "1", pct, "100.5"), nil, "main", pct, "100500m (101)"},
		{"negative percentage", limits(gpu, "1", pct, "-1"), nil, "main", pct, "-1 (-1)"},
		{"privileged container with a GPU", limits(gpu, "1"), privileged, "main", "", "container main is privileged"},
		{"privileged container, GPU by the webhook's default", limits(gpushare.ResourceMemory, "1000"), privileged, "main", "", "is privileged"},
		{"node already assigned", limits(gpu, "1"), func(p *corev1.Pod) { p.Spec.NodeName = "gpu-1" }, "", "", "pod has node assigned (gpu-1)"},
		{"no containers", limits(gpu, "1"), func(p *corev1.Pod) { p.Spec.InitContainers, p.Spec.Containers = p.Spec.Containers, nil }, "", "", "pod has no containers"},
		// Found by HAMi v2.10.0's own Handle: it refuses an empty pod
		// before it looks at the scheduler's name.
		{"no containers, another scheduler", limits(gpu, "1"), func(p *corev1.Pod) { p.Spec.Containers, p.Spec.SchedulerName = nil, "volcano" }, "", "", "pod has no containers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Resources: tc.res}}}}
			pod.Namespace, pod.Name = "ns", "p"
			if tc.edit != nil {
				tc.edit(pod)
			}
			_, err := gpushare.NewPodRequest(pod, gpushare.Config{})
			require.ErrorIs(t, err, gpushare.ErrWebhookRefused)
			var we *gpushare.WebhookError
			require.ErrorAs(t, err, &we)
			require.Equal(t, gpushare.WebhookError{Pod: "ns/p", Container: tc.container, Resource: tc.resource, Reason: we.Reason}, *we)
			require.Contains(t, err.Error(), tc.says)
			require.Contains(t, err.Error(), "ns/p: HAMi's admission webhook refuses the pod")

			// The scheduler alone, as without the webhook: no refusal.
			if len(pod.Spec.Containers) > 0 {
				_, err = gpushare.NewPodRequest(pod, gpushare.Config{SkipWebhook: true})
				require.NoError(t, err)
			}
		})
	}
}

// TestNewPodRequest_webhookPasses: pods HAMi's webhook does not see get
// neither its refusals nor its defaults: the chart's objectSelector skips
// hami.io/webhook: ignore, and Handle passes pods of another scheduler.
func TestNewPodRequest_webhookPasses(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*corev1.Pod)
	}{
		{"labelled ignore", func(p *corev1.Pod) { p.Labels = map[string]string{"hami.io/webhook": "ignore"} }},
		{"another scheduler", func(p *corev1.Pod) { p.Spec.SchedulerName = "volcano" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{
				{Name: "main", Resources: limits(gpushare.ResourceGPU, "1", gpushare.ResourceMemoryPercentage, "101")},
				{Name: "mem-only", Resources: limits(gpushare.ResourceMemory, "1000")},
			}}}
			tc.edit(pod)
			r, err := gpushare.NewPodRequest(pod, gpushare.Config{})
			require.NoError(t, err)
			require.Equal(t, []gpushare.ContainerRequest{
				{Name: "main", Count: 1, MemoryPercent: 100},
				{Name: "mem-only"}, // no defaultGPUNum: no GPU
			}, r.Containers)
			require.Len(t, r.Warnings, 1)
			require.Contains(t, r.Warnings[0].Error(), "clamps it to 100")
		})
	}
	for _, name := range []string{"", corev1.DefaultSchedulerName, "hami-scheduler"} {
		pod := &corev1.Pod{Spec: corev1.PodSpec{SchedulerName: name, Containers: []corev1.Container{
			{Name: "main", Resources: limits(gpushare.ResourceGPU, "1", gpushare.ResourceMemoryPercentage, "101")}}}}
		_, err := gpushare.NewPodRequest(pod, gpushare.Config{})
		require.ErrorIs(t, err, gpushare.ErrWebhookRefused, "schedulerName %q", name)
	}
}

// TestNewPodRequest_negativeCores: gpucores HAMi reads as negative are a
// *RequestError, with the webhook or without and whatever StrictRequests:
// HAMi would subtract them from the card's usage (and let the pod join a
// card whose cores are all allocated), which gpushare refuses to predict.
func TestNewPodRequest_negativeCores(t *testing.T) {
	for _, v := range []string{"-1", "-150", "4294967295", "2147483648"} {
		for _, cfg := range []gpushare.Config{{}, {SkipWebhook: true}, {StrictRequests: true}} {
			pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{
				{Name: "main", Resources: limits(gpushare.ResourceGPU, "1", gpushare.ResourceCores, v)}}}}
			pod.Namespace, pod.Name = "ns", "p"
			_, err := gpushare.NewPodRequest(pod, cfg)
			require.ErrorIs(t, err, gpushare.ErrInvalidRequest, v)
			var re *gpushare.RequestError
			require.ErrorAs(t, err, &re)
			require.Equal(t, "ns/p", re.Pod)
			require.Equal(t, "main", re.Container)
			require.Equal(t, gpushare.ResourceCores, re.Resource)
			require.Contains(t, re.Reason, "which it would subtract from the GPU's usage")
		}
	}
	// A container without a GPU count asks nothing of HAMi: its cores are
	// never read.
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{
		{Name: "main", Resources: limits(gpushare.ResourceCores, "-1")}}}}
	_, err := gpushare.NewPodRequest(pod, gpushare.Config{SkipWebhook: true})
	require.NoError(t, err)
}

// TestFit_webhookRefusedNeverFits: a pod HAMi refuses never reaches Fit,
// though there is room for the request the scheduler alone would derive.
func TestFit_webhookRefusedNeverFits(t *testing.T) {
	l, err := gpushare.NewLedger(gpushare.Config{})
	require.NoError(t, err)
	node, err := gpusharetest.Node("gpu-1", gpusharetest.GPUs("gpu-1", 1, "NVIDIA A100", 81920)...)
	require.NoError(t, err)
	require.NoError(t, l.Load([]corev1.Node{*node}, nil))
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{
		{Name: "main", Resources: limits(gpushare.ResourceGPU, "1", gpushare.ResourceMemoryPercentage, "101")}}}}
	_, err = gpushare.NewPodRequest(pod, l.Config())
	require.ErrorIs(t, err, gpushare.ErrWebhookRefused)
	req, err := gpushare.NewPodRequest(pod, gpushare.Config{SkipWebhook: true})
	require.NoError(t, err)
	_, err = l.Fit(req)
	require.NoError(t, err, "without the webhook the same pod fits")
}
