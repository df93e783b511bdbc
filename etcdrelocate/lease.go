package etcdrelocate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	coordclient "k8s.io/client-go/kubernetes/typed/coordination/v1"
)

// One executor acts on a tenant etcd at a time. It holds the
// coordination.k8s.io/v1 Lease <cluster>-relocate in the tenant namespace:
// taken by Create (or, once expired, by an Update conditional on the
// resourceVersion read), renewed in the background every third of its
// duration by Updates conditional on the resourceVersion it last wrote, and
// deleted (preconditioned on that resourceVersion) when the run returns.
//
// Expiry of another holder's lease is never judged by comparing clocks: a
// lease whose renewTime+duration lies ahead by this machine's clock is
// refused outright (*LockedError); one that looks expired is watched, and
// taken only once its resourceVersion has stayed the same for a full
// leaseDuration on this machine's monotonic clock (as client-go's leader
// election does).
//
// Fencing: the holder's own lease is valid until the start of its last
// successful write plus two thirds of the duration (monotonic clock). No
// other executor can take it before the start of that write plus the full
// duration, so the last third is the margin for a call that began just
// before the check (Timeouts.Call, 10 s, is a third of the default 30 s).
// Every mutating call checks the validity first; past it, it renews
// synchronously (a conditional Update that only succeeds if nobody took the
// lease meanwhile) or stops with ErrLeaseLost.

// defaultLeaseDuration is the Lease duration when Config.LeaseDuration is
// zero.
const defaultLeaseDuration = 30 * time.Second

// leaseName is the Lease of a cluster's relocations (the checkpoint
// ConfigMap has the same name).
func leaseName(cluster string) string { return cluster + "-relocate" }

// LeaseInfo is a relocation Lease as observed: who holds it and until when
// by the holder's own clock.
type LeaseInfo struct {
	// Name is the Lease's name in the tenant namespace.
	Name string
	// Holder is the holder's identity ("" for a released lease).
	Holder string
	// Renewed is the last renewal and Expires Renewed plus the duration,
	// both by the holder's clock.
	Renewed, Expires time.Time
	// gone: the holder is a process of this machine that has exited
	// (holderGone), so the lease is taken over after one call timeout
	// instead of refusing.
	gone bool
}

// active reports whether the lease is held and not expired by the
// holder's own clock at now (a refusal is always safe; a takeover is judged
// on the observer's clock instead).
func (l *LeaseInfo) active(now time.Time) bool {
	return l != nil && l.Holder != "" && now.Before(l.Expires)
}

func leaseInfo(o *coordinationv1.Lease) *LeaseInfo {
	li := &LeaseInfo{Name: o.Name}
	if o.Spec.HolderIdentity != nil {
		li.Holder = *o.Spec.HolderIdentity
	}
	switch {
	case o.Spec.RenewTime != nil:
		li.Renewed = o.Spec.RenewTime.Time
	case o.Spec.AcquireTime != nil:
		li.Renewed = o.Spec.AcquireTime.Time
	}
	if o.Spec.LeaseDurationSeconds != nil && !li.Renewed.IsZero() {
		li.Expires = li.Renewed.Add(time.Duration(*o.Spec.LeaseDurationSeconds) * time.Second)
	}
	return li
}

// observeLease reads the cluster's relocation Lease into kv.
func (r *Relocator) observeLease(ctx context.Context, ns, cluster string, kv *kubeView) error {
	o, err := r.cfg.Kube.CoordinationV1().Leases(ns).Get(ctx, leaseName(cluster), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get lease: %w", err)
	}
	kv.lease = leaseInfo(o)
	kv.lease.gone = kv.lease.Holder != "" && holderGone(kv.lease.Holder)
	return nil
}

func lockedError(ns string, o *coordinationv1.Lease) *LockedError {
	li := leaseInfo(o)
	return &LockedError{Namespace: ns, Lease: o.Name, Holder: li.Holder, Expires: li.Expires}
}

// lease is a held relocation Lease.
type lease struct {
	api    coordclient.LeaseInterface
	ns     string
	name   string
	holder string
	dur    time.Duration
	log    *slog.Logger
	call   time.Duration

	renewMu sync.Mutex // serialises renewals
	mu      sync.Mutex
	cur     *coordinationv1.Lease // as last written by us
	valid   time.Time             // monotonic deadline of our own validity
	lost    error
	onLost  func(error)

	stop chan struct{}
	done chan struct{}
}

// takeLease takes the Lease ns/name for this run (a cluster's relocation
// Lease is leaseName(cluster)), or returns a
// *LockedError naming the holder. A lease that looks expired is watched
// for its duration first (see above), so taking over a dead holder's lease
// can take that long.
// onLost is called once if the lease is lost.
func (r *Relocator) takeLease(ctx context.Context, ns, name string, onLost func(error)) (*lease, error) {
	l := &lease{api: r.cfg.Kube.CoordinationV1().Leases(ns), ns: ns, name: name, holder: newHolderID(r.cfg.Identity),
		dur: r.leaseDuration(), log: r.log, call: r.t.Call, onLost: onLost, stop: make(chan struct{}), done: make(chan struct{})}
	for attempt := 0; attempt < 5; attempt++ {
		sent := time.Now()
		cctx, cancel := context.WithTimeout(ctx, l.call)
		obj, err := l.api.Create(cctx, l.record(nil), metav1.CreateOptions{})
		cancel()
		if err == nil {
			return l.start(obj, sent), nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("take lease %s/%s: %w", ns, l.name, err)
		}
		cur, err := l.api.Get(ctx, l.name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue // released meanwhile
		}
		if err != nil {
			return nil, fmt.Errorf("read lease %s/%s: %w", ns, l.name, err)
		}
		if h := leaseInfo(cur); h.Holder != "" {
			switch {
			case holderGone(h.Holder):
				cur, err = l.waitGone(ctx, cur)
			case h.active(time.Now()):
				return nil, lockedError(ns, cur)
			default:
				cur, err = l.waitStale(ctx, cur)
			}
			if err != nil {
				return nil, err
			}
			if cur == nil {
				continue
			}
		}
		sent = time.Now()
		obj, err = l.api.Update(ctx, l.record(cur), metav1.UpdateOptions{})
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			continue // someone else moved first; look again
		}
		if err != nil {
			return nil, fmt.Errorf("take over lease %s/%s: %w", ns, l.name, err)
		}
		r.log.Warn("took over an expired relocation lease", "lease", l.name, "previous", leaseInfo(cur).Holder)
		return l.start(obj, sent), nil
	}
	return nil, fmt.Errorf("%w: lease %s/%s changed under every attempt to take it", ErrLocked, ns, l.name)
}

func (r *Relocator) leaseDuration() time.Duration {
	d := r.cfg.LeaseDuration
	if d <= 0 {
		d = defaultLeaseDuration
	}
	return max(d.Round(time.Second), 3*time.Second)
}

// waitStale watches a lease that looks expired by its holder's clock for
// its full duration on our clock (see watchUnchanged).
func (l *lease) waitStale(ctx context.Context, o *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	d := l.dur
	if o.Spec.LeaseDurationSeconds != nil {
		d = max(d, time.Duration(*o.Spec.LeaseDurationSeconds)*time.Second)
	}
	l.log.Info("relocation lease looks expired; watching it before taking over", "lease", l.name, "holder", leaseInfo(o).Holder, "for", d)
	return l.watchUnchanged(ctx, o, d)
}

// waitGone watches the lease of a holder found dead (holderGone) for one
// call timeout, in which a request it sent before it died lands (see
// watchUnchanged).
func (l *lease) waitGone(ctx context.Context, o *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	l.log.Warn("relocation lease held by a process of this machine that is gone; taking it over after one call timeout",
		"lease", l.name, "holder", leaseInfo(o).Holder, "wait", l.call)
	return l.watchUnchanged(ctx, o, l.call)
}

// watchUnchanged returns the lease o to take over once its resourceVersion
// has not changed for d on our clock, nil if it was deleted meanwhile, a
// *LockedError if it was renewed or taken, or the context's error.
func (l *lease) watchUnchanged(ctx context.Context, o *coordinationv1.Lease, d time.Duration) (*coordinationv1.Lease, error) {
	observed := time.Now()
	for time.Since(observed) < d {
		t := time.NewTimer(min(d/10, time.Second))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
		got, err := l.api.Get(ctx, l.name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return nil, nil
		case err != nil:
			return nil, fmt.Errorf("read lease %s/%s: %w", l.ns, l.name, err)
		case got.ResourceVersion != o.ResourceVersion:
			if leaseInfo(got).Holder == "" {
				return got, nil
			}
			return nil, lockedError(l.ns, got)
		}
	}
	return o, nil
}

// record returns the Lease to write: prev with us as holder and the
// renewal stamped now (a new one if prev is nil).
func (l *lease) record(prev *coordinationv1.Lease) *coordinationv1.Lease {
	now := metav1.NewMicroTime(time.Now())
	secs := int32(l.dur / time.Second)
	o := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: l.name, Namespace: l.ns,
		Labels: map[string]string{"app.kubernetes.io/managed-by": "tenantkit-etcdrelocate"}}}
	if prev != nil {
		o = prev.DeepCopy()
	}
	if o.Spec.HolderIdentity == nil || *o.Spec.HolderIdentity != l.holder {
		var transitions int32
		if o.Spec.LeaseTransitions != nil {
			transitions = *o.Spec.LeaseTransitions + 1
		}
		o.Spec.HolderIdentity, o.Spec.AcquireTime, o.Spec.LeaseTransitions = &l.holder, &now, &transitions
	}
	o.Spec.LeaseDurationSeconds, o.Spec.RenewTime = &secs, &now
	return o
}

// start records a successful write begun at sent and starts renewing.
func (l *lease) start(o *coordinationv1.Lease, sent time.Time) *lease {
	l.written(o, sent)
	go l.renewLoop()
	return l
}

func (l *lease) written(o *coordinationv1.Lease, sent time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cur, l.valid = o, sent.Add(l.dur-l.dur/3)
}

// renewLoop renews every third of the duration until release.
func (l *lease) renewLoop() {
	defer close(l.done)
	t := time.NewTicker(l.dur / 3)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), l.dur/3)
		if err := l.renew(ctx); err != nil && !errors.Is(err, ErrLeaseLost) {
			l.log.Warn("could not renew the relocation lease; retrying", "lease", l.name, "err", err)
		}
		cancel()
		if l.lostErr() != nil {
			return
		}
	}
}

// renew extends the lease by an Update conditional on the resourceVersion
// we wrote last. A conflict with another holder, or a deleted lease, loses
// it for good.
func (l *lease) renew(ctx context.Context) error {
	l.renewMu.Lock()
	defer l.renewMu.Unlock()
	if err := l.lostErr(); err != nil {
		return err
	}
	l.mu.Lock()
	cur := l.cur
	l.mu.Unlock()
	sent := time.Now()
	obj, err := l.api.Update(ctx, l.record(cur), metav1.UpdateOptions{})
	if err == nil {
		l.written(obj, sent)
		return nil
	}
	if !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
		return fmt.Errorf("renew lease %s/%s: %w", l.ns, l.name, err)
	}
	got, gerr := l.api.Get(ctx, l.name, metav1.GetOptions{})
	switch {
	case gerr == nil && leaseInfo(got).Holder == l.holder:
		// Our own earlier write whose answer was lost: adopt it, and
		// renew at the next tick (validity is not extended by a read).
		l.mu.Lock()
		l.cur = got
		l.mu.Unlock()
		return nil
	case gerr == nil:
		return l.lose(fmt.Errorf("%w: lease %s/%s is now held by %s", ErrLeaseLost, l.ns, l.name, leaseInfo(got).Holder))
	case apierrors.IsNotFound(gerr):
		return l.lose(fmt.Errorf("%w: lease %s/%s was deleted", ErrLeaseLost, l.ns, l.name))
	}
	return fmt.Errorf("renew lease %s/%s: %w", l.ns, l.name, gerr)
}

func (l *lease) lose(err error) error {
	l.mu.Lock()
	first := l.lost == nil
	if first {
		l.lost = err
	}
	onLost := l.onLost
	l.mu.Unlock()
	if first {
		l.log.Error("relocation lease lost: stopping before the next change", "lease", l.name, "err", err)
		if onLost != nil {
			onLost(err)
		}
	}
	return err
}

func (l *lease) lostErr() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lost
}

// check is the fence before every mutating call: nil while the lease is
// valid by our monotonic clock; past that, a synchronous renewal decides.
func (l *lease) check(ctx context.Context) error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	lost, valid := l.lost, time.Now().Before(l.valid)
	l.mu.Unlock()
	if lost != nil || valid {
		return lost
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.call)
	defer cancel()
	if err := l.renew(cctx); err != nil {
		if errors.Is(err, ErrLeaseLost) {
			return err
		}
		return fmt.Errorf("%w: lease %s/%s expired and could not be renewed: %w", ErrLeaseLost, l.ns, l.name, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !time.Now().Before(l.valid) {
		return fmt.Errorf("%w: lease %s/%s expired and was not renewed", ErrLeaseLost, l.ns, l.name)
	}
	return nil
}

// confirm reads the Lease and checks that we still hold it: the re-check
// at every step boundary, which also catches a lease taken from us by hand.
func (l *lease) confirm(ctx context.Context) error {
	if l == nil {
		return nil
	}
	if err := l.check(ctx); err != nil {
		return err
	}
	got, err := l.api.Get(ctx, l.name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return l.lose(fmt.Errorf("%w: lease %s/%s was deleted", ErrLeaseLost, l.ns, l.name))
	case err != nil:
		return fmt.Errorf("read lease %s/%s: %w", l.ns, l.name, err)
	case leaseInfo(got).Holder != l.holder:
		return l.lose(fmt.Errorf("%w: lease %s/%s is now held by %s", ErrLeaseLost, l.ns, l.name, leaseInfo(got).Holder))
	}
	return nil
}

// release stops renewing and deletes the lease if it is still ours
// (preconditioned on our last resourceVersion).
func (l *lease) release(ctx context.Context) {
	if l == nil {
		return
	}
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
	<-l.done
	if l.lostErr() != nil {
		return
	}
	l.mu.Lock()
	cur := l.cur
	l.mu.Unlock()
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.call)
	defer cancel()
	uid, rv := types.UID(cur.UID), cur.ResourceVersion
	err := l.api.Delete(cctx, l.name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}})
	if err != nil && !apierrors.IsNotFound(err) {
		l.log.Warn("could not release the relocation lease; it expires by itself", "lease", l.name, "err", err)
	}
}
