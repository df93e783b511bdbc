package etcdrelocate

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
)

// watchFunc is a typed client's Watch.
type watchFunc func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)

// watched is one object to watch: a typed client's Watch and the name.
type watched struct {
	watch watchFunc
	name  string
}

// wakeOn watches each of the objects and
// returns a channel that delivers after any event, so that a wait re-checks
// at once instead of at its next poll (retryWake). The watches end when the
// returned stop is called (or ctx ends). A failed watch is re-established;
// the poll remains the fallback.
func wakeOn(ctx context.Context, objects ...watched) (<-chan struct{}, func()) {
	ctx, stop := context.WithCancel(ctx)
	ch := make(chan struct{}, 1)
	notify := func() {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	for _, o := range objects {
		opts := metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", o.name).String()}
		go func() {
			for ctx.Err() == nil {
				wi, err := o.watch(ctx, opts)
				if err != nil {
					select {
					case <-ctx.Done():
					case <-time.After(pollMax):
					}
					continue
				}
				follow(ctx, wi, notify)
			}
		}()
	}
	return ch, stop
}

// follow calls notify on every event of wi until it closes or ctx ends.
func follow(ctx context.Context, wi watch.Interface, notify func()) {
	defer wi.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case _, ok := <-wi.ResultChan():
			if !ok {
				return
			}
			notify()
		}
	}
}

// podWatch and claimWatch watch the member's pod and claim.
func podWatch(x *run) watched {
	return watched{x.r.cfg.Kube.CoreV1().Pods(x.p.Namespace).Watch, x.p.Member.Pod}
}

func claimWatch(x *run) watched {
	return watched{x.r.cfg.Kube.CoreV1().PersistentVolumeClaims(x.p.Namespace).Watch, x.p.Member.PVC}
}
