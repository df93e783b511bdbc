package extender_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"

	"github.com/cozystack/tenantkit/gpushare"
	"github.com/cozystack/tenantkit/gpushare/extender"
	"github.com/cozystack/tenantkit/gpushare/hamisim"
	"github.com/cozystack/tenantkit/localenv"
)

const schedulerName = "gpushare-scheduler"

// schedulerConfig is HAMi's chart's KubeSchedulerConfiguration
// (charts/hami/templates/scheduler/configmapnew.yaml@v2.10.0) with the
// extender on plain HTTP at addr.
func schedulerConfig(addr string) []byte {
	return fmt.Appendf(nil, `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: %s
extenders:
- urlPrefix: "http://%s"
  filterVerb: filter
  bindVerb: bind
  nodeCacheCapable: true
  weight: 1
  httpTimeout: 30s
  enableHTTPS: false
  managedResources:
  - {name: nvidia.com/gpu, ignoredByScheduler: true}
  - {name: nvidia.com/gpumem, ignoredByScheduler: true}
  - {name: nvidia.com/gpucores, ignoredByScheduler: true}
  - {name: nvidia.com/gpumem-percentage, ignoredByScheduler: true}
  - {name: nvidia.com/priority, ignoredByScheduler: true}
`, schedulerName, addr)
}

// fixtureNode is a stand-in GPU node: registered as HAMi's device plugin
// registers it, then given labels, taints, CPU, memory and pods.
type fixtureNode struct {
	name   string
	gpus   int
	model  string
	mem    int32
	cpu    string
	labels map[string]string
	taints []corev1.Taint
}

var fixture = []fixtureNode{
	{name: "gpu-1", gpus: 2, model: "NVIDIA-Tesla T4", mem: 15360, cpu: "8", labels: map[string]string{"zone": "a"}},
	{name: "gpu-2", gpus: 2, model: "NVIDIA-Tesla T4", mem: 15360, cpu: "8", labels: map[string]string{"zone": "b"}},
	{name: "gpu-3", gpus: 4, model: "NVIDIA-Tesla T4", mem: 15360, cpu: "8", labels: map[string]string{"pool": "dedicated"},
		taints: []corev1.Taint{{Key: "dedicated", Value: "ml", Effect: corev1.TaintEffectNoSchedule}}},
	{name: "gpu-4", gpus: 2, model: "NVIDIA A100-SXM4-40GB", mem: 40960, cpu: "2", labels: map[string]string{"zone": "a"}},
	{name: "gpu-5", gpus: 1, model: "NVIDIA-Tesla T4", mem: 15360, cpu: "8", labels: map[string]string{"zone": "b"}},
	{name: "cpu-1", cpu: "8", labels: map[string]string{"zone": "a"}},
}

func setUpNodes(ctx context.Context, t *testing.T, cs kubernetes.Interface) {
	for _, f := range fixture {
		if f.gpus > 0 {
			require.NoError(t, hamisim.RegisterNode(ctx, cs, f.name, hamisim.GPUs(f.name, f.gpus, f.model, f.mem)))
		} else {
			_, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: f.name}}, metav1.CreateOptions{})
			require.NoError(t, err)
		}
		n, err := cs.CoreV1().Nodes().Get(ctx, f.name, metav1.GetOptions{})
		require.NoError(t, err)
		if n.Labels == nil {
			n.Labels = map[string]string{}
		}
		for k, v := range f.labels {
			n.Labels[k] = v
		}
		n.Spec.Taints = f.taints
		n, err = cs.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
		require.NoError(t, err)
		if n.Status.Allocatable == nil {
			n.Status.Allocatable, n.Status.Capacity = corev1.ResourceList{}, corev1.ResourceList{}
		}
		for _, l := range []corev1.ResourceList{n.Status.Allocatable, n.Status.Capacity} {
			l[corev1.ResourceCPU], l[corev1.ResourceMemory], l[corev1.ResourcePods] =
				resource.MustParse(f.cpu), resource.MustParse("64Gi"), resource.MustParse("110")
		}
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue,
			LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
		_, err = cs.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
		require.NoError(t, err)
	}
}

// shape is a pod of the scenario.
type shape struct {
	name        string
	gpus        string
	memMiB      int64
	cpu         string
	selector    map[string]string
	tolerate    bool
	affinityKey string // required node affinity: label key exists
}

func (s shape) pod(ns string) *corev1.Pod {
	lim := corev1.ResourceList{gpushare.ResourceGPU: resource.MustParse(s.gpus),
		gpushare.ResourceMemory: *resource.NewQuantity(s.memMiB, resource.DecimalSI)}
	req := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(s.cpu)}
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: s.name},
		Spec: corev1.PodSpec{SchedulerName: schedulerName, NodeSelector: s.selector,
			Containers: []corev1.Container{{Name: "main", Image: "none", Resources: corev1.ResourceRequirements{Limits: lim, Requests: req}}}}}
	if s.tolerate {
		p.Spec.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "ml", Effect: corev1.TaintEffectNoSchedule}}
	}
	if s.affinityKey != "" {
		p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: s.affinityKey, Operator: corev1.NodeSelectorOpExists}}}}}}}
	}
	return p
}

// predict is the oracle: kube-scheduler's taint, affinity and CPU checks
// (component-helpers) pick the eligible nodes, then a ledger of those
// nodes and every pod decides as gpushare's Fit does.
func predict(ctx context.Context, t *testing.T, cs kubernetes.Interface, pod *corev1.Pod) (*gpushare.Ledger, gpushare.Placement, error) {
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	pods, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	cpuUsed := map[string]int64{}
	for _, p := range pods.Items {
		if p.Spec.NodeName != "" {
			cpuUsed[p.Spec.NodeName] += p.Spec.Containers[0].Resources.Requests.Cpu().MilliValue()
		}
	}
	var eligible []corev1.Node
	for _, n := range nodes.Items {
		if _, bad := helpers.FindMatchingUntoleratedTaint(klog.Background(), n.Spec.Taints, pod.Spec.Tolerations, nil, false); bad {
			continue
		}
		if ok, err := nodeaffinity.GetRequiredNodeAffinity(pod).Match(&n); err != nil || !ok {
			continue
		}
		if cpuUsed[n.Name]+pod.Spec.Containers[0].Resources.Requests.Cpu().MilliValue() > n.Status.Allocatable.Cpu().MilliValue() {
			continue
		}
		eligible = append(eligible, n)
	}
	l, err := gpushare.NewLedger(gpushare.Config{})
	require.NoError(t, err)
	require.NoError(t, l.Load(eligible, pods.Items))
	req, err := gpushare.NewPodRequest(pod, l.Config())
	require.NoError(t, err)
	pl, err := l.Fit(req)
	return l, pl, err
}

// outcome waits until the pod is bound or kube-scheduler reported it
// unschedulable, and returns the node or the event's message.
func outcome(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, name string) (node, event string) {
	require.Eventually(t, func() bool {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		if node = p.Spec.NodeName; node != "" {
			return true
		}
		evs, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
		if err != nil {
			return false
		}
		for _, e := range evs.Items {
			if e.Reason == "FailedScheduling" {
				event = e.Message
				return true
			}
		}
		return false
	}, 2*time.Minute, 100*time.Millisecond, "pod %s/%s neither bound nor refused", ns, name)
	return node, event
}

// Behind the real kube-scheduler: each pod lands where Fit predicts among
// the nodes kube-scheduler's own checks leave, or stays Pending with the
// predicted reason in its event; then a burst of 200 pods fills the GPUs
// exactly, over-committing none.
func TestKubeScheduler(t *testing.T) {
	env := localenv.StartT(t, localenv.Config{EtcdMembers: 1})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	cs, err := kubernetes.NewForConfig(env.APIServers()[0].RESTConfig())
	require.NoError(t, err)
	setUpNodes(ctx, t, cs)
	for _, ns := range []string{"ml", "burst"} {
		_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	x, err := extender.New(cs, extender.Config{})
	require.NoError(t, err)
	addr, err := x.Start(ctx)
	require.NoError(t, err)
	require.NoError(t, env.StartScheduler(ctx, "gpushare", schedulerConfig(addr.String())))

	for _, s := range []shape{
		{name: "plain", gpus: "1", memMiB: 4000, cpu: "1"},
		{name: "zone-b", gpus: "1", memMiB: 8000, cpu: "1", selector: map[string]string{"zone": "b"}},
		{name: "dedicated", gpus: "2", memMiB: 10000, cpu: "1", tolerate: true, affinityKey: "pool"},
		{name: "cpu-heavy", gpus: "1", memMiB: 2000, cpu: "4"},
		{name: "a100", gpus: "1", memMiB: 30000, cpu: "1", selector: map[string]string{"zone": "a"}},
		{name: "too-big", gpus: "1", memMiB: 50000, cpu: "1"},
		{name: "three-gpus", gpus: "3", memMiB: 1000, cpu: "1"},
		{name: "cpu-starved", gpus: "1", memMiB: 1000, cpu: "7", selector: map[string]string{"zone": "a"}},
	} {
		pod := s.pod("ml")
		_, want, werr := predict(ctx, t, cs, pod)
		_, err := cs.CoreV1().Pods("ml").Create(ctx, pod, metav1.CreateOptions{})
		require.NoError(t, err)
		node, event := outcome(ctx, t, cs, "ml", s.name)
		var fe *gpushare.FitError
		switch {
		case werr == nil:
			require.Equal(t, want.Node, node, "%s: %s", s.name, event)
			got, err := cs.CoreV1().Pods("ml").Get(ctx, s.name, metav1.GetOptions{})
			require.NoError(t, err)
			require.Equal(t, want.Annotations(time.Time{})[gpushare.AnnotationAllocated], got.Annotations[gpushare.AnnotationAllocated], s.name)
			require.Equal(t, got.Annotations[gpushare.AnnotationAllocated], got.Annotations[gpushare.AnnotationToAllocate])
			require.Equal(t, node, got.Annotations[gpushare.AnnotationNode])
		case errors.As(werr, &fe) && len(fe.Nodes) > 0:
			require.Empty(t, node, "%s: predicted %v", s.name, werr)
			require.Contains(t, event, extender.Reason(fe.Nodes[0]), s.name)
		default: // no eligible GPU node at all: kube-scheduler's own reason
			require.Empty(t, node, "%s: predicted %v", s.name, werr)
			require.NotEmpty(t, event)
		}
		t.Logf("%s: node %q, event %q", s.name, node, event)
	}
	burst(ctx, t, cs)
}

// burst creates 200 identical pods at once and waits until as many are
// bound as WhatIf says fit; no GPU ends over-committed.
func burst(ctx context.Context, t *testing.T, cs kubernetes.Interface) {
	s := shape{gpus: "1", memMiB: 6000, cpu: "10m"}
	l, _, _ := predict(ctx, t, cs, s.pod("burst"))
	req, err := gpushare.NewPodRequest(s.pod("burst"), l.Config())
	require.NoError(t, err)
	wi, err := l.WhatIf(req, 1000)
	require.NoError(t, err)
	require.Positive(t, wi.Fits)
	require.Less(t, wi.Fits, 200)
	var wg sync.WaitGroup
	errs := make([]error, 200)
	for i := range 200 {
		wg.Go(func() {
			s := s
			s.name = fmt.Sprintf("b-%03d", i)
			_, errs[i] = cs.CoreV1().Pods("burst").Create(ctx, s.pod("burst"), metav1.CreateOptions{})
		})
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	require.Eventually(t, func() bool {
		pods, err := cs.CoreV1().Pods("burst").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		bound := 0
		for _, p := range pods.Items {
			if p.Spec.NodeName != "" {
				bound++
			}
		}
		return bound == wi.Fits
	}, 3*time.Minute, 200*time.Millisecond, "want %d bound", wi.Fits)

	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	pods, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	recount, err := gpushare.NewLedger(gpushare.Config{})
	require.NoError(t, err)
	require.NoError(t, recount.Load(nodes.Items, pods.Items))
	for _, nu := range recount.Nodes() {
		for _, g := range nu.GPUs {
			require.False(t, g.Overcommitted, "%s/%s: %+v of %+v", nu.Name, g.ID, g.Used, g.Capacity)
		}
	}
	for _, p := range pods.Items {
		require.Equal(t, p.Spec.NodeName, p.Annotations[gpushare.AnnotationNode], "%s/%s", p.Namespace, p.Name)
		if p.Spec.NodeName != "" {
			require.Equal(t, string(gpushare.BindAllocating), p.Annotations[gpushare.AnnotationBindPhase])
		}
	}
}
