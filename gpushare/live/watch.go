package live

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/cozystack/tenantkit/gpushare"
)

// watched holds the ledgers a Watch feeds, so that a second one is refused.
var watched sync.Map // *gpushare.Ledger → struct{}

// Watch fills l from the Nodes, Pods and ResourceQuotas of client's
// cluster through client-go informers and keeps it current until ctx is done. It returns
// once the initial lists are applied, or with ctx's cause. Objects the
// ledger leaves out are recorded in its Problems and logged to its
// Config().Logger. Without a client Watch returns ErrNoClient; while
// another Watch feeds l, ErrAlreadyWatched.
func Watch(ctx context.Context, client kubernetes.Interface, l *gpushare.Ledger) error {
	if client == nil {
		return ErrNoClient
	}
	if _, busy := watched.LoadOrStore(l, struct{}{}); busy {
		return ErrAlreadyWatched
	}
	log := l.Config().Logger
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTransform(trimObject))
	nodeReg, err := factory.Core().V1().Nodes().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { onNode(l, log, obj) },
		UpdateFunc: func(_, obj any) { onNode(l, log, obj) },
		DeleteFunc: func(obj any) {
			if n, ok := untombstone(obj).(*corev1.Node); ok {
				l.DeleteNode(n.Name)
			}
		},
	})
	if err != nil {
		watched.Delete(l)
		return fmt.Errorf("watch nodes: %w", err)
	}
	podReg, err := factory.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { onPod(l, log, obj) },
		UpdateFunc: func(_, obj any) { onPod(l, log, obj) },
		DeleteFunc: func(obj any) {
			if p, ok := untombstone(obj).(*corev1.Pod); ok {
				l.DeletePod(p.Namespace, p.Name)
			}
		},
	})
	if err != nil {
		watched.Delete(l)
		return fmt.Errorf("watch pods: %w", err)
	}
	quotaReg, err := factory.Core().V1().ResourceQuotas().Informer().AddEventHandler(quotaHandler(l))
	if err != nil {
		watched.Delete(l)
		return fmt.Errorf("watch resource quotas: %w", err)
	}
	factory.Start(ctx.Done())
	go func() {
		<-ctx.Done()
		factory.Shutdown()
		watched.Delete(l)
	}()
	if !cache.WaitForCacheSync(ctx.Done(), nodeReg.HasSynced, podReg.HasSynced, quotaReg.HasSynced) {
		return fmt.Errorf("sync nodes, pods and resource quotas: %w", context.Cause(ctx))
	}
	return nil
}

// quotaHandler feeds ResourceQuotas to l as HAMi's scheduler feeds its
// QuotaManager (onAddQuota, onUpdateQuota, onDelQuota in
// pkg/scheduler/scheduler.go@v2.10.0).
func quotaHandler(l *gpushare.Ledger) cache.ResourceEventHandlerFuncs {
	set := func(obj any) {
		if q, ok := obj.(*corev1.ResourceQuota); ok {
			l.SetResourceQuota(q)
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    set,
		UpdateFunc: func(_, obj any) { set(obj) },
		DeleteFunc: func(obj any) {
			if q, ok := untombstone(obj).(*corev1.ResourceQuota); ok {
				l.DeleteResourceQuota(q.Namespace, q.Name)
			}
		},
	}
}

func onNode(l *gpushare.Ledger, log *slog.Logger, obj any) {
	if n, ok := obj.(*corev1.Node); ok {
		if err := l.SetNode(n); err != nil {
			log.Warn("gpushare: skipping node registration", "node", n.Name, "err", err)
		}
	}
}

func onPod(l *gpushare.Ledger, log *slog.Logger, obj any) {
	if p, ok := obj.(*corev1.Pod); ok {
		if err := l.SetPod(p); err != nil {
			log.Warn("gpushare: skipping pod allocation", "pod", p.Namespace+"/"+p.Name, "err", err)
		}
	}
}

func untombstone(obj any) any {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return t.Obj
	}
	return obj
}

// trimObject keeps what accounting reads: names, HAMi annotations, the
// container counts and names, phase and init container results, and a
// quota's spec.hard.
func trimObject(obj any) (any, error) {
	switch o := obj.(type) {
	case *corev1.Pod:
		t := &corev1.Pod{ObjectMeta: trimMeta(&o.ObjectMeta)}
		t.Spec.InitContainers = namesOnly(o.Spec.InitContainers)
		t.Spec.Containers = namesOnly(o.Spec.Containers)
		t.Status.Phase = o.Status.Phase
		for _, s := range o.Status.InitContainerStatuses {
			t.Status.InitContainerStatuses = append(t.Status.InitContainerStatuses,
				corev1.ContainerStatus{Name: s.Name, State: corev1.ContainerState{Terminated: s.State.Terminated}})
		}
		return t, nil
	case *corev1.Node:
		return &corev1.Node{ObjectMeta: trimMeta(&o.ObjectMeta)}, nil
	case *corev1.ResourceQuota:
		return &corev1.ResourceQuota{ObjectMeta: trimMeta(&o.ObjectMeta), Spec: corev1.ResourceQuotaSpec{Hard: o.Spec.Hard}}, nil
	}
	return obj, nil
}

func trimMeta(m *metav1.ObjectMeta) metav1.ObjectMeta {
	t := metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace, UID: m.UID,
		ResourceVersion: m.ResourceVersion, DeletionTimestamp: m.DeletionTimestamp}
	for k, v := range m.Annotations {
		if strings.HasPrefix(k, "hami.io/") || strings.HasPrefix(k, "nvidia.com/") {
			if t.Annotations == nil {
				t.Annotations = map[string]string{}
			}
			t.Annotations[k] = v
		}
	}
	return t
}

func namesOnly(cs []corev1.Container) []corev1.Container {
	if len(cs) == 0 {
		return nil
	}
	out := make([]corev1.Container, len(cs))
	for i := range cs {
		out[i].Name = cs[i].Name
	}
	return out
}
