package etcdrelocate

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	appsclient "k8s.io/client-go/kubernetes/typed/apps/v1"
	coreclient "k8s.io/client-go/kubernetes/typed/core/v1"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// A run reaches etcd and Kubernetes only through clients that check its
// lease before every call that changes something (lease.check), so that an
// executor that lost its lease stops before it touches either again. The
// wrappers cover every changing verb the package uses (Create, Update,
// Patch, Delete of pods, claims, volumes, nodes, ConfigMaps, StatefulSets
// and the operators' resources; the membership calls and MoveLeader);
// reads pass through.

type fenceFunc func(ctx context.Context) error

func fenced[T any](ctx context.Context, f fenceFunc, call func() (T, error)) (T, error) {
	if err := f(ctx); err != nil {
		var zero T
		return zero, err
	}
	return call()
}

func fencedErr(ctx context.Context, f fenceFunc, call func() error) error {
	if err := f(ctx); err != nil {
		return err
	}
	return call()
}

// fencedRelocator returns a copy of r whose clients check l before every
// change.
func (r *Relocator) fencedRelocator(l *lease) *Relocator {
	fr := *r
	f := fenceFunc(l.check)
	fr.cfg.Kube = fencedKube{Interface: r.cfg.Kube, f: f}
	if r.cfg.Dynamic != nil {
		fr.cfg.Dynamic = fencedDynamic{Interface: r.cfg.Dynamic, f: f}
	}
	return &fr
}

// fenceMembership makes the run's etcd membership calls check l first.
func fenceMembership(m *memberOps, l *lease) {
	f := fenceFunc(l.check)
	m.api = fencedEtcd{MembershipClient: m.api, f: f}
	one := m.one
	m.one = func(url string) (MembershipClient, func(), error) {
		c, closeFn, err := one(url)
		if err != nil {
			return nil, nil, err
		}
		return fencedEtcd{MembershipClient: c, f: f}, closeFn, nil
	}
}

type fencedEtcd struct {
	MembershipClient
	f fenceFunc
}

func (c fencedEtcd) MemberAddAsLearner(ctx context.Context, peers []string) (*clientv3.MemberAddResponse, error) {
	return fenced(ctx, c.f, func() (*clientv3.MemberAddResponse, error) { return c.MembershipClient.MemberAddAsLearner(ctx, peers) })
}

func (c fencedEtcd) MemberPromote(ctx context.Context, id uint64) (*clientv3.MemberPromoteResponse, error) {
	return fenced(ctx, c.f, func() (*clientv3.MemberPromoteResponse, error) { return c.MembershipClient.MemberPromote(ctx, id) })
}

func (c fencedEtcd) MemberRemove(ctx context.Context, id uint64) (*clientv3.MemberRemoveResponse, error) {
	return fenced(ctx, c.f, func() (*clientv3.MemberRemoveResponse, error) { return c.MembershipClient.MemberRemove(ctx, id) })
}

func (c fencedEtcd) MoveLeader(ctx context.Context, id uint64) (*clientv3.MoveLeaderResponse, error) {
	return fenced(ctx, c.f, func() (*clientv3.MoveLeaderResponse, error) { return c.MembershipClient.MoveLeader(ctx, id) })
}

type fencedKube struct {
	kubernetes.Interface
	f fenceFunc
}

func (k fencedKube) CoreV1() coreclient.CoreV1Interface {
	return fencedCore{CoreV1Interface: k.Interface.CoreV1(), f: k.f}
}

func (k fencedKube) AppsV1() appsclient.AppsV1Interface {
	return fencedApps{AppsV1Interface: k.Interface.AppsV1(), f: k.f}
}

type fencedCore struct {
	coreclient.CoreV1Interface
	f fenceFunc
}

func (c fencedCore) Pods(ns string) coreclient.PodInterface {
	return fencedPods{PodInterface: c.CoreV1Interface.Pods(ns), f: c.f}
}

func (c fencedCore) PersistentVolumeClaims(ns string) coreclient.PersistentVolumeClaimInterface {
	return fencedClaims{PersistentVolumeClaimInterface: c.CoreV1Interface.PersistentVolumeClaims(ns), f: c.f}
}

func (c fencedCore) PersistentVolumes() coreclient.PersistentVolumeInterface {
	return fencedVolumes{PersistentVolumeInterface: c.CoreV1Interface.PersistentVolumes(), f: c.f}
}

func (c fencedCore) Nodes() coreclient.NodeInterface {
	return fencedNodes{NodeInterface: c.CoreV1Interface.Nodes(), f: c.f}
}

func (c fencedCore) ConfigMaps(ns string) coreclient.ConfigMapInterface {
	return fencedConfigMaps{ConfigMapInterface: c.CoreV1Interface.ConfigMaps(ns), f: c.f}
}

type fencedPods struct {
	coreclient.PodInterface
	f fenceFunc
}

func (c fencedPods) Create(ctx context.Context, o *corev1.Pod, opts metav1.CreateOptions) (*corev1.Pod, error) {
	return fenced(ctx, c.f, func() (*corev1.Pod, error) { return c.PodInterface.Create(ctx, o, opts) })
}

func (c fencedPods) Update(ctx context.Context, o *corev1.Pod, opts metav1.UpdateOptions) (*corev1.Pod, error) {
	return fenced(ctx, c.f, func() (*corev1.Pod, error) { return c.PodInterface.Update(ctx, o, opts) })
}

func (c fencedPods) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, sub ...string) (*corev1.Pod, error) {
	return fenced(ctx, c.f, func() (*corev1.Pod, error) { return c.PodInterface.Patch(ctx, name, pt, data, opts, sub...) })
}

func (c fencedPods) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	return fencedErr(ctx, c.f, func() error { return c.PodInterface.Delete(ctx, name, opts) })
}

type fencedClaims struct {
	coreclient.PersistentVolumeClaimInterface
	f fenceFunc
}

func (c fencedClaims) Create(ctx context.Context, o *corev1.PersistentVolumeClaim, opts metav1.CreateOptions) (*corev1.PersistentVolumeClaim, error) {
	return fenced(ctx, c.f, func() (*corev1.PersistentVolumeClaim, error) {
		return c.PersistentVolumeClaimInterface.Create(ctx, o, opts)
	})
}

func (c fencedClaims) Update(ctx context.Context, o *corev1.PersistentVolumeClaim, opts metav1.UpdateOptions) (*corev1.PersistentVolumeClaim, error) {
	return fenced(ctx, c.f, func() (*corev1.PersistentVolumeClaim, error) {
		return c.PersistentVolumeClaimInterface.Update(ctx, o, opts)
	})
}

func (c fencedClaims) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, sub ...string) (*corev1.PersistentVolumeClaim, error) {
	return fenced(ctx, c.f, func() (*corev1.PersistentVolumeClaim, error) {
		return c.PersistentVolumeClaimInterface.Patch(ctx, name, pt, data, opts, sub...)
	})
}

func (c fencedClaims) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	return fencedErr(ctx, c.f, func() error { return c.PersistentVolumeClaimInterface.Delete(ctx, name, opts) })
}

type fencedVolumes struct {
	coreclient.PersistentVolumeInterface
	f fenceFunc
}

func (c fencedVolumes) Update(ctx context.Context, o *corev1.PersistentVolume, opts metav1.UpdateOptions) (*corev1.PersistentVolume, error) {
	return fenced(ctx, c.f, func() (*corev1.PersistentVolume, error) { return c.PersistentVolumeInterface.Update(ctx, o, opts) })
}

func (c fencedVolumes) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, sub ...string) (*corev1.PersistentVolume, error) {
	return fenced(ctx, c.f, func() (*corev1.PersistentVolume, error) {
		return c.PersistentVolumeInterface.Patch(ctx, name, pt, data, opts, sub...)
	})
}

func (c fencedVolumes) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	return fencedErr(ctx, c.f, func() error { return c.PersistentVolumeInterface.Delete(ctx, name, opts) })
}

type fencedNodes struct {
	coreclient.NodeInterface
	f fenceFunc
}

func (c fencedNodes) Update(ctx context.Context, o *corev1.Node, opts metav1.UpdateOptions) (*corev1.Node, error) {
	return fenced(ctx, c.f, func() (*corev1.Node, error) { return c.NodeInterface.Update(ctx, o, opts) })
}

func (c fencedNodes) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, sub ...string) (*corev1.Node, error) {
	return fenced(ctx, c.f, func() (*corev1.Node, error) { return c.NodeInterface.Patch(ctx, name, pt, data, opts, sub...) })
}

type fencedConfigMaps struct {
	coreclient.ConfigMapInterface
	f fenceFunc
}

func (c fencedConfigMaps) Create(ctx context.Context, o *corev1.ConfigMap, opts metav1.CreateOptions) (*corev1.ConfigMap, error) {
	return fenced(ctx, c.f, func() (*corev1.ConfigMap, error) { return c.ConfigMapInterface.Create(ctx, o, opts) })
}

func (c fencedConfigMaps) Update(ctx context.Context, o *corev1.ConfigMap, opts metav1.UpdateOptions) (*corev1.ConfigMap, error) {
	return fenced(ctx, c.f, func() (*corev1.ConfigMap, error) { return c.ConfigMapInterface.Update(ctx, o, opts) })
}

func (c fencedConfigMaps) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, sub ...string) (*corev1.ConfigMap, error) {
	return fenced(ctx, c.f, func() (*corev1.ConfigMap, error) {
		return c.ConfigMapInterface.Patch(ctx, name, pt, data, opts, sub...)
	})
}

func (c fencedConfigMaps) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	return fencedErr(ctx, c.f, func() error { return c.ConfigMapInterface.Delete(ctx, name, opts) })
}

type fencedApps struct {
	appsclient.AppsV1Interface
	f fenceFunc
}

func (c fencedApps) StatefulSets(ns string) appsclient.StatefulSetInterface {
	return fencedStatefulSets{StatefulSetInterface: c.AppsV1Interface.StatefulSets(ns), f: c.f}
}

type fencedStatefulSets struct {
	appsclient.StatefulSetInterface
	f fenceFunc
}

func (c fencedStatefulSets) Update(ctx context.Context, o *appsv1.StatefulSet, opts metav1.UpdateOptions) (*appsv1.StatefulSet, error) {
	return fenced(ctx, c.f, func() (*appsv1.StatefulSet, error) { return c.StatefulSetInterface.Update(ctx, o, opts) })
}

func (c fencedStatefulSets) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, sub ...string) (*appsv1.StatefulSet, error) {
	return fenced(ctx, c.f, func() (*appsv1.StatefulSet, error) {
		return c.StatefulSetInterface.Patch(ctx, name, pt, data, opts, sub...)
	})
}

func (c fencedStatefulSets) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	return fencedErr(ctx, c.f, func() error { return c.StatefulSetInterface.Delete(ctx, name, opts) })
}

type fencedDynamic struct {
	dynamic.Interface
	f fenceFunc
}

func (d fencedDynamic) Resource(gvr schema.GroupVersionResource) dynamic.NamespaceableResourceInterface {
	return fencedNamespaceable{NamespaceableResourceInterface: d.Interface.Resource(gvr), f: d.f}
}

type fencedNamespaceable struct {
	dynamic.NamespaceableResourceInterface
	f fenceFunc
}

func (n fencedNamespaceable) Namespace(ns string) dynamic.ResourceInterface {
	return fencedResource{ResourceInterface: n.NamespaceableResourceInterface.Namespace(ns), f: n.f}
}

type fencedResource struct {
	dynamic.ResourceInterface
	f fenceFunc
}

func (c fencedResource) Create(ctx context.Context, o *unstructured.Unstructured, opts metav1.CreateOptions, sub ...string) (*unstructured.Unstructured, error) {
	return fenced(ctx, c.f, func() (*unstructured.Unstructured, error) { return c.ResourceInterface.Create(ctx, o, opts, sub...) })
}

func (c fencedResource) Update(ctx context.Context, o *unstructured.Unstructured, opts metav1.UpdateOptions, sub ...string) (*unstructured.Unstructured, error) {
	return fenced(ctx, c.f, func() (*unstructured.Unstructured, error) { return c.ResourceInterface.Update(ctx, o, opts, sub...) })
}

func (c fencedResource) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, sub ...string) (*unstructured.Unstructured, error) {
	return fenced(ctx, c.f, func() (*unstructured.Unstructured, error) {
		return c.ResourceInterface.Patch(ctx, name, pt, data, opts, sub...)
	})
}

func (c fencedResource) Delete(ctx context.Context, name string, opts metav1.DeleteOptions, sub ...string) error {
	return fencedErr(ctx, c.f, func() error { return c.ResourceInterface.Delete(ctx, name, opts, sub...) })
}
