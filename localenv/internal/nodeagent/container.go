package nodeagent

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/cozystack/tenantkit/internal/process"
)

// container is the agent's state of one container of a pod.
type container struct {
	name string
	// runs is true for containers the agent runs as a process (etcd);
	// other containers are only reported Running.
	runs bool
	// simulated says why nothing runs for a container that is only
	// reported Running.
	simulated string

	proc      *process.Process
	mounts    []mount
	startedAt time.Time
	restarts  int32
	lastTerm  *corev1.ContainerStateTerminated
	// terminated is set when the container exited and will not restart
	// (restart policy Never or OnFailure after success).
	terminated *corev1.ContainerStateTerminated
	waiting    *corev1.ContainerStateWaiting
	backoff    time.Duration
	notBefore  time.Time
	// started and ready are the startup and readiness probe results.
	started, ready bool
	cancel         context.CancelFunc
}

// isEtcd reports whether a container is an etcd server: its image's
// repository is named etcd (quay.io/coreos/etcd, registry.k8s.io/etcd, ...).
func isEtcd(c corev1.Container) bool {
	repo := c.Image
	if i := strings.IndexByte(repo, '@'); i >= 0 {
		repo = repo[:i]
	}
	if i := strings.LastIndexByte(repo, ':'); i > strings.LastIndexByte(repo, '/') {
		repo = repo[:i]
	}
	return path.Base(repo) == "etcd"
}

func (w *podWorker) containerState(spec corev1.Container) *container {
	w.mu.Lock()
	defer w.mu.Unlock()
	c := w.containers[spec.Name]
	if c == nil {
		c = &container{name: spec.Name, runs: isEtcd(spec)}
		if !c.runs {
			c.simulated = fmt.Sprintf("container %s (image %s) is simulated: the tenantkit node agent runs only etcd containers as processes and reports this one Running and Ready without running anything", spec.Name, spec.Image)
			c.started, c.ready, c.startedAt = true, true, time.Now()
		}
		w.containers[spec.Name] = c
	}
	return c
}

// reconcile moves one container towards running: it notices an exited
// process, applies the restart policy and backoff, and starts the process.
func (w *podWorker) reconcile(ctx context.Context, pod *corev1.Pod, spec corev1.Container) {
	c := w.containerState(spec)
	if !c.runs {
		return
	}
	w.mu.Lock()
	if c.proc != nil && !c.proc.Running() {
		w.noteExit(pod, c)
	}
	wait := time.Until(c.notBefore)
	idle := c.proc == nil && c.terminated == nil
	w.mu.Unlock()
	if !idle {
		return
	}
	if wait > 0 {
		w.wakeAfter(wait)
		return
	}
	if err := w.start(ctx, pod, spec, c); err != nil {
		w.mu.Lock()
		c.waiting = &corev1.ContainerStateWaiting{Reason: "CreateContainerConfigError", Message: err.Error()}
		w.mu.Unlock()
		w.agent.log.Warn("start container", "pod", w.key(), "container", spec.Name, "err", err)
		w.wakeAfter(time.Second)
	}
}

// noteExit records an exited process and decides about its restart. Called
// with w.mu held.
func (w *podWorker) noteExit(pod *corev1.Pod, c *container) {
	code := exitCode(c.proc)
	term := &corev1.ContainerStateTerminated{
		ExitCode:    int32(code),
		Reason:      "Error",
		StartedAt:   metaTime(c.startedAt),
		FinishedAt:  metaTime(time.Now()),
		ContainerID: containerID(c.proc),
	}
	if code == 0 {
		term.Reason = "Completed"
	}
	ran := time.Since(c.startedAt)
	if c.cancel != nil {
		c.cancel()
	}
	c.proc, c.started, c.ready, c.lastTerm = nil, false, false, term
	restart := pod.Spec.RestartPolicy == corev1.RestartPolicyAlways || pod.Spec.RestartPolicy == "" ||
		pod.Spec.RestartPolicy == corev1.RestartPolicyOnFailure && code != 0
	if !restart {
		c.terminated = term
		return
	}
	c.restarts++
	maxBackoff := 30 * w.agent.cfg.RestartBackoff
	switch {
	case c.backoff == 0 || ran > 2*maxBackoff:
		c.backoff = w.agent.cfg.RestartBackoff
	default:
		c.backoff = min(2*c.backoff, maxBackoff)
	}
	c.notBefore = time.Now().Add(c.backoff)
	c.waiting = &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff",
		Message: fmt.Sprintf("back-off %s restarting failed container=%s pod=%s", c.backoff, c.name, w.name)}
	w.agent.log.Info("container exited", "pod", w.key(), "container", c.name, "exitCode", code, "restartIn", c.backoff)
}

// start prepares volumes, environment and command line and starts the
// container's process.
func (w *podWorker) start(ctx context.Context, pod *corev1.Pod, spec corev1.Container, c *container) error {
	if w.agent.cfg.EtcdBinary == "" {
		return errors.New("the node agent has no etcd binary to run etcd containers")
	}
	l, err := w.prepare(ctx, pod, spec)
	if err != nil {
		return err
	}
	p, err := process.Start(process.Config{
		Name:      w.key() + "/" + spec.Name,
		Path:      w.agent.cfg.EtcdBinary,
		Args:      l.args,
		Env:       l.env,
		Dir:       l.rootfs,
		LogPath:   l.logPath,
		StopGrace: gracePeriod(pod),
	})
	if err != nil {
		return err
	}
	probeCtx, cancel := context.WithCancel(context.Background())
	w.mu.Lock()
	c.proc, c.mounts, c.startedAt, c.waiting, c.cancel = p, l.mounts, time.Now(), nil, cancel
	w.mu.Unlock()
	w.agent.log.Info("container started", "pod", w.key(), "container", spec.Name, "pid", p.PID(), "ip", w.podIP())
	go func() {
		select {
		case <-p.Done():
			cancel()
			w.wake()
		case <-probeCtx.Done():
		}
	}()
	go w.runProbes(probeCtx, spec, c, p)
	return nil
}

// gracePeriod is the pod's termination grace period, capped at 10s to keep
// tests quick.
func gracePeriod(pod *corev1.Pod) time.Duration {
	g := 30 * time.Second
	if s := pod.Spec.TerminationGracePeriodSeconds; s != nil {
		g = time.Duration(*s) * time.Second
	}
	if pod.DeletionGracePeriodSeconds != nil {
		g = min(g, time.Duration(*pod.DeletionGracePeriodSeconds)*time.Second)
	}
	return max(min(g, 10*time.Second), 100*time.Millisecond)
}

// exitCode returns a finished process's exit code, 128+signal for a process
// killed by a signal (137 for SIGKILL), as container runtimes report it.
func exitCode(p *process.Process) int {
	var ee *exec.ExitError
	if err := p.ExitErr(); errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	} else if err != nil {
		return 128
	}
	return 0
}

func containerID(p *process.Process) string { return fmt.Sprintf("tenantkit://%d", p.PID()) }

// KillContainer kills a pod's container process with SIGKILL, as a crash
// would; the agent restarts it per the pod's restart policy. It returns
// ErrNotRunning when the container has no running process.
func (a *Agent) KillContainer(namespace, pod, name string) error {
	w := a.workerFor(namespace, pod)
	if w == nil {
		return fmt.Errorf("%w: pod %s/%s", ErrNotRunning, namespace, pod)
	}
	w.mu.Lock()
	c := w.containers[name]
	var p *process.Process
	if c != nil {
		p = c.proc
	}
	w.mu.Unlock()
	if p == nil || !p.Running() {
		return fmt.Errorf("%w: container %s of pod %s/%s", ErrNotRunning, name, namespace, pod)
	}
	return p.Kill()
}
