package nodeagent

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/cozystack/tenantkit/internal/process"
)

// podWorker runs one pod on its node, like the kubelet's pod worker: it
// wakes on every change of the pod and of its containers and reconciles.
type podWorker struct {
	agent     *Agent
	node      *node
	uid       types.UID
	namespace string
	name      string
	dir       string
	wakeCh    chan struct{}

	mu         sync.Mutex
	ip         netip.Addr
	startTime  time.Time
	containers map[string]*container
	done       bool
	timer      *time.Timer
	written    *writtenStatus
}

func newPodWorker(a *Agent, n *node, pod *corev1.Pod) *podWorker {
	return &podWorker{
		agent: a, node: n, uid: pod.UID, namespace: pod.Namespace, name: pod.Name,
		dir:        filepath.Join(n.dir, "pods", fmt.Sprintf("%s_%s_%s", pod.Namespace, pod.Name, pod.UID)),
		wakeCh:     make(chan struct{}, 1),
		containers: map[string]*container{},
	}
}

func (w *podWorker) wake() {
	select {
	case w.wakeCh <- struct{}{}:
	default:
	}
}

// wakeAfter schedules a wake-up (backoff expiry, retry).
func (w *podWorker) wakeAfter(d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.timer != nil {
		w.timer.Stop()
	}
	w.timer = time.AfterFunc(d, w.wake)
}

func (w *podWorker) isDone() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.done
}

func (w *podWorker) run() {
	defer w.agent.wg.Done()
	for {
		select {
		case <-w.agent.stop:
			return
		case <-w.wakeCh:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		finished := w.sync(ctx)
		cancel()
		if finished {
			w.agent.forget(w)
			return
		}
	}
}

// sync reconciles the pod once; it reports true when the pod is gone and
// the worker is finished.
func (w *podWorker) sync(ctx context.Context) bool {
	pod, err := w.agent.pods.Pods(w.namespace).Get(w.name)
	if err != nil || pod.UID != w.uid {
		w.finish()
		return true
	}
	if w.node.isDown() {
		return false
	}
	if pod.DeletionTimestamp != nil {
		w.terminate(ctx, pod)
		return false
	}
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return false
	}
	if err := w.ensureIP(); err != nil {
		w.agent.log.Error("allocate pod IP", "pod", w.key(), "err", err)
		return false
	}
	for _, c := range pod.Spec.Containers {
		w.reconcile(ctx, pod, c)
	}
	w.postStatus(ctx, pod)
	return false
}

func (w *podWorker) key() string { return w.namespace + "/" + w.name }

func (w *podWorker) ensureIP() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ip.IsValid() {
		return nil
	}
	ip, err := w.node.subnet.Allocate(string(w.uid))
	if err != nil {
		return err
	}
	w.ip, w.startTime = ip, time.Now()
	return nil
}

func (w *podWorker) podIP() netip.Addr {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ip
}

// terminate stops the containers of a pod marked for deletion and then
// deletes the pod for good (grace period 0), as the kubelet does once its
// containers are gone.
func (w *podWorker) terminate(ctx context.Context, pod *corev1.Pod) {
	w.stopContainers(false)
	uid := pod.UID
	err := w.agent.cfg.Client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name,
		metav1.DeleteOptions{GracePeriodSeconds: new(int64(0)), Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		w.agent.log.Warn("delete terminated pod", "pod", w.key(), "err", err)
		w.wakeAfter(time.Second)
		return
	}
	w.agent.log.Info("pod terminated", "pod", w.key(), "node", w.node.cfg.Name)
}

// finish releases what the pod held once its object is gone: processes
// (force deleted pods may still have some), the IP, the pod directory.
func (w *podWorker) finish() {
	w.stopContainers(false)
	w.mu.Lock()
	w.done = true
	if w.timer != nil {
		w.timer.Stop()
	}
	ip := w.ip
	w.mu.Unlock()
	if ip.IsValid() {
		w.node.subnet.Release(ip)
	}
	_ = os.RemoveAll(w.dir)
}

// stopContainers stops every container process: SIGKILL when hard (node
// power loss), else SIGTERM with the container's grace period.
func (w *podWorker) stopContainers(hard bool) {
	w.mu.Lock()
	var procs []*process.Process
	for _, c := range w.containers {
		if c.proc != nil {
			procs = append(procs, c.proc)
		}
		c.ready, c.started = false, false
	}
	w.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range procs {
		wg.Go(func() {
			if hard {
				_ = p.Kill()
			} else {
				_ = p.Stop()
			}
		})
	}
	wg.Wait()
}

func (w *podWorker) resetBackoff() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, c := range w.containers {
		c.backoff, c.notBefore = 0, time.Time{}
	}
}

func (w *podWorker) processes() []*process.Process {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []*process.Process
	for _, c := range w.containers {
		if c.proc != nil && c.proc.Running() {
			out = append(out, c.proc)
		}
	}
	return out
}

func (w *podWorker) usesDir(dir string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, c := range w.containers {
		if c.proc == nil || !c.proc.Running() {
			continue
		}
		for _, m := range c.mounts {
			if m.hostPath == dir || strings.HasPrefix(m.hostPath, dir+string(filepath.Separator)) {
				return true
			}
		}
	}
	return false
}
