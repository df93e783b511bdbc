package clusterdns

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// testPod is a ready pod etcd-0 of app etcd in tenant-demo on address ip,
// with hostname etcd-0 in subdomain etcd-headless, changed by mut.
func testPod(ip string, mut func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "etcd-0", Namespace: "tenant-demo", Labels: map[string]string{"app": "etcd"}},
		Spec:       corev1.PodSpec{Hostname: "etcd-0", Subdomain: "etcd-headless"},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
	}
	if mut != nil {
		mut(p)
	}
	return p
}

// testService is a service in tenant-demo selecting app etcd, changed by mut.
func testService(name string, mut func(*corev1.Service)) *corev1.Service {
	s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "tenant-demo"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "etcd"}}}
	if mut != nil {
		mut(s)
	}
	return s
}

const (
	podHost = "etcd-0.etcd-headless.tenant-demo.svc"
	podPTR  = podHost + ".cluster.local."
)

func headless(s *corev1.Service)        { s.Spec.ClusterIP = corev1.ClusterIPNone }
func publishNotReady(s *corev1.Service) { s.Spec.PublishNotReadyAddresses = true }
func notReady(p *corev1.Pod)            { p.Status.Conditions[0].Status = corev1.ConditionFalse }
func terminating(p *corev1.Pod)         { p.DeletionTimestamp = &metav1.Time{} }

// podSlice has a ready endpoint etcd-1 of etcd-headless on 10.40.9.2.
var podSlice = &discoveryv1.EndpointSlice{
	ObjectMeta:  metav1.ObjectMeta{Name: "etcd-headless-x", Namespace: "tenant-demo", Labels: map[string]string{discoveryv1.LabelServiceName: "etcd-headless"}},
	AddressType: discoveryv1.AddressTypeIPv4,
	Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.40.9.2"}, Hostname: ptrTo("etcd-1"), Conditions: discoveryv1.EndpointConditions{Ready: ptrTo(true)}}},
}

func ptrTo[T any](v T) *T { return &v }

// podTests are the cases of TestBuildRecords_pods.
var podTests = []struct {
	name      string
	services  []*corev1.Service
	slices    []*discoveryv1.EndpointSlice
	pods      []*corev1.Pod
	wantAddrs map[string][]string
	wantPTR   map[string][]string
}{
	{name: "ready pod: hostname, service and reverse",
		services:  []*corev1.Service{testService("etcd-headless", headless), testService("etcd", nil)},
		pods:      []*corev1.Pod{testPod("127.40.1.1", nil)},
		wantAddrs: map[string][]string{podHost: {"127.40.1.1"}, "etcd-headless.tenant-demo.svc": {"127.40.1.1"}, "etcd.tenant-demo.svc": {"127.40.1.1"}},
		wantPTR:   map[string][]string{"127.40.1.1": {podPTR}}},
	{name: "pod address not on loopback comes from slices only",
		services: []*corev1.Service{testService("etcd-headless", headless)},
		pods:     []*corev1.Pod{testPod("10.40.1.2", nil)}},
	{name: "pod without an address",
		services: []*corev1.Service{testService("etcd-headless", headless)},
		pods:     []*corev1.Pod{testPod("", nil)}},
	{name: "not ready pod",
		services: []*corev1.Service{testService("etcd-headless", headless)},
		pods:     []*corev1.Pod{testPod("127.40.1.1", notReady)}},
	{name: "pod without a ready condition",
		services: []*corev1.Service{testService("etcd-headless", headless)},
		pods:     []*corev1.Pod{testPod("127.40.1.1", func(p *corev1.Pod) { p.Status.Conditions = nil })}},
	{name: "not ready pod of a service publishing not ready addresses",
		services:  []*corev1.Service{testService("etcd-headless", publishNotReady), testService("etcd", nil)},
		pods:      []*corev1.Pod{testPod("127.40.1.1", notReady)},
		wantAddrs: map[string][]string{podHost: {"127.40.1.1"}, "etcd-headless.tenant-demo.svc": {"127.40.1.1"}},
		wantPTR:   map[string][]string{"127.40.1.1": {podPTR}}},
	{name: "terminating ready pod",
		services: []*corev1.Service{testService("etcd-headless", headless)},
		pods:     []*corev1.Pod{testPod("127.40.1.1", terminating)}},
	{name: "terminating pod of a service publishing not ready addresses",
		services:  []*corev1.Service{testService("etcd-headless", publishNotReady)},
		pods:      []*corev1.Pod{testPod("127.40.1.1", terminating)},
		wantAddrs: map[string][]string{podHost: {"127.40.1.1"}, "etcd-headless.tenant-demo.svc": {"127.40.1.1"}},
		wantPTR:   map[string][]string{"127.40.1.1": {podPTR}}},
	{name: "terminal pod",
		services: []*corev1.Service{testService("etcd-headless", publishNotReady)},
		pods:     []*corev1.Pod{testPod("127.40.1.1", func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded })}},
	{name: "subdomain service that does not select the pod still names it",
		services:  []*corev1.Service{testService("etcd-headless", func(s *corev1.Service) { s.Spec.Selector = map[string]string{"app": "other"} })},
		pods:      []*corev1.Pod{testPod("127.40.1.1", nil)},
		wantAddrs: map[string][]string{podHost: {"127.40.1.1"}},
		wantPTR:   map[string][]string{"127.40.1.1": {podPTR}}},
	{name: "no service named like the subdomain",
		services:  []*corev1.Service{testService("etcd", nil)},
		pods:      []*corev1.Pod{testPod("127.40.1.1", nil)},
		wantAddrs: map[string][]string{"etcd.tenant-demo.svc": {"127.40.1.1"}}},
	{name: "service without a selector",
		services:  []*corev1.Service{testService("etcd-headless", func(s *corev1.Service) { s.Spec.Selector = nil })},
		pods:      []*corev1.Pod{testPod("127.40.1.1", nil)},
		wantAddrs: map[string][]string{podHost: {"127.40.1.1"}},
		wantPTR:   map[string][]string{"127.40.1.1": {podPTR}}},
	{name: "external name services get no pods",
		services: []*corev1.Service{testService("etcd-headless", func(s *corev1.Service) {
			s.Spec.Type, s.Spec.ExternalName = corev1.ServiceTypeExternalName, "example.org"
		})},
		pods: []*corev1.Pod{testPod("127.40.1.1", nil)}},
	{name: "service in another namespace",
		services: []*corev1.Service{testService("etcd-headless", func(s *corev1.Service) { s.Namespace = "other" })},
		pods:     []*corev1.Pod{testPod("127.40.1.1", nil)}},
	{name: "pods and endpoint slices combine",
		services: []*corev1.Service{testService("etcd-headless", headless)},
		slices:   []*discoveryv1.EndpointSlice{podSlice},
		pods: []*corev1.Pod{testPod("127.40.2.1", nil), testPod("127.40.1.1", func(p *corev1.Pod) {
			p.Name, p.Spec.Hostname = "etcd-2", "etcd-2"
		})},
		wantAddrs: map[string][]string{
			podHost:                                {"127.40.2.1"},
			"etcd-1.etcd-headless.tenant-demo.svc": {"10.40.9.2"},
			"etcd-2.etcd-headless.tenant-demo.svc": {"127.40.1.1"},
			"etcd-headless.tenant-demo.svc":        {"10.40.9.2", "127.40.1.1", "127.40.2.1"},
		},
		wantPTR: map[string][]string{
			"10.40.9.2":  {"etcd-1.etcd-headless.tenant-demo.svc.cluster.local."},
			"127.40.1.1": {"etcd-2.etcd-headless.tenant-demo.svc.cluster.local."},
			"127.40.2.1": {podPTR},
		}},
}

func TestBuildRecords_pods(t *testing.T) {
	for _, tt := range podTests {
		t.Run(tt.name, func(t *testing.T) {
			r := buildRecords("cluster.local", nil, tt.services, tt.slices, tt.pods)
			addrs := map[string][]string{}
			for name, as := range r.addrs {
				for _, a := range as {
					addrs[name] = append(addrs[name], a.String())
				}
			}
			ptrs := map[string][]string{}
			for a, names := range r.ptr {
				ptrs[a.String()] = names
			}
			require.Equal(t, nonNil(tt.wantAddrs), addrs)
			require.Equal(t, nonNil(tt.wantPTR), ptrs)
		})
	}
}

func nonNil(m map[string][]string) map[string][]string {
	if m == nil {
		return map[string][]string{}
	}
	return m
}

// The server follows pods: a loopback pod resolves once it is ready.
func TestServer_resolvesLoopbackPods(t *testing.T) {
	ctx := t.Context()
	cs := fake.NewClientset(testService("etcd-headless", func(s *corev1.Service) { s.Spec.ClusterIP = corev1.ClusterIPNone }),
		testPod("127.0.0.1", func(p *corev1.Pod) { p.Status.Conditions[0].Status = corev1.ConditionFalse }))
	srv, err := Start(ctx, Config{Client: cs, Addr: netip.MustParseAddr("127.0.0.1")})
	require.NoError(t, err)
	defer srv.Stop()
	const name = "etcd-0.etcd-headless.tenant-demo.svc"
	_, err = srv.Resolver().LookupHost(ctx, name)
	require.Error(t, err)
	_, err = cs.CoreV1().Pods("tenant-demo").UpdateStatus(ctx, testPod("127.0.0.1", nil), metav1.UpdateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		addrs, err := srv.Resolver().LookupHost(context.Background(), name)
		return err == nil && len(addrs) == 1 && addrs[0] == "127.0.0.1"
	}, 10*time.Second, 20*time.Millisecond)
}
