package clusterdns

import (
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// addPodRecords adds the records of pods whose IP is a loopback address:
// the pods of real kubelets, which run with hostNetwork on their node's
// loopback address 127.X.Y.1. The apiserver refuses loopback addresses in
// Endpoints and EndpointSlices (ValidateEndpointIP), so the endpoint slice
// controller cannot publish these pods and the records are derived here
// from the pods themselves. Pods with other addresses come from
// EndpointSlices only. For a published pod in namespace ns:
//
//   - <hostname>.<subdomain>.<ns>.svc: its address, and the matching PTR
//     record, when spec.hostname and spec.subdomain are set and a Service
//     named subdomain exists in ns;
//   - <svc>.<ns>.svc: its address, for every Service in ns whose non-empty
//     selector matches the pod's labels.
//
// Whether a pod is published for a service mirrors the endpoint slice
// controller of Kubernetes 1.37 (k8s.io/endpointslice: reconciler.go with
// util.ShouldPodBeInEndpoints(pod, true), podToEndpoint in utils.go, and
// syncService in k8s.io/kubernetes/pkg/controller/endpointslice):
// ExternalName services get no endpoints; terminal pods (phase Succeeded or
// Failed) and pods without an IP are left out; an endpoint is ready, the
// only condition cluster DNS answers, when the service has
// publishNotReadyAddresses or the pod's Ready condition is true and the pod
// is not terminating (deletionTimestamp unset). So a terminating pod is
// published only for services with publishNotReadyAddresses. The
// controller's check that the pod's node exists is not mirrored.
func (r *records) addPodRecords(domain string, hostAddr func(netip.Addr) netip.Addr, services []*corev1.Service, pods []*corev1.Pod) {
	byNS := map[string][]*corev1.Service{}
	for _, svc := range services {
		if svc.Spec.Type != corev1.ServiceTypeExternalName {
			byNS[svc.Namespace] = append(byNS[svc.Namespace], svc)
		}
	}
	for _, pod := range pods {
		a, ok := loopbackPodAddr(pod)
		if !ok {
			continue
		}
		if hostAddr != nil {
			a = hostAddr(a)
		}
		for _, svc := range byNS[pod.Namespace] {
			if !podReadyFor(pod, svc) {
				continue
			}
			base := strings.ToLower(svc.Name + "." + svc.Namespace + ".svc")
			if len(svc.Spec.Selector) > 0 && labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(pod.Labels)) {
				r.add(base, a)
			}
			if pod.Spec.Hostname != "" && pod.Spec.Subdomain == svc.Name {
				host := strings.ToLower(pod.Spec.Hostname) + "." + base
				r.add(host, a)
				r.ptr[a] = appendUnique(r.ptr[a], host+"."+domain+".")
			}
		}
	}
}

// loopbackPodAddr returns the pod's status.podIP when it is a loopback
// address and the pod is not terminal.
func loopbackPodAddr(pod *corev1.Pod) (netip.Addr, bool) {
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return netip.Addr{}, false
	}
	a, err := netip.ParseAddr(pod.Status.PodIP)
	if err != nil || !a.IsLoopback() {
		return netip.Addr{}, false
	}
	return a.Unmap(), true
}

// podReadyFor reports whether the endpoint slice controller would mark the
// pod's endpoint ready in svc's slices: publishNotReadyAddresses, or Ready
// and not terminating.
func podReadyFor(pod *corev1.Pod, svc *corev1.Service) bool {
	if svc.Spec.PublishNotReadyAddresses {
		return true
	}
	if pod.DeletionTimestamp != nil {
		return false
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
