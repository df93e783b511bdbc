package nodeagent

import (
	"context"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ConditionSimulated is the pod condition that says which of a pod's
// containers are only reported Running, with nothing actually running.
const ConditionSimulated corev1.PodConditionType = "localenv.tenantkit.io/Simulated"

// postStatus writes the pod's status if it differs from what the
// apiserver has.
func (w *podWorker) postStatus(ctx context.Context, pod *corev1.Pod) {
	st := w.desiredStatus(pod)
	if apiequality.Semantic.DeepEqual(st, pod.Status) {
		return
	}
	// The apiserver may normalise what we write; if nothing changed on
	// either side since our last write, the difference is that and not
	// news.
	w.mu.Lock()
	same := w.written != nil && apiequality.Semantic.DeepEqual(st, w.written.desired) &&
		apiequality.Semantic.DeepEqual(pod.Status, w.written.stored)
	w.mu.Unlock()
	if same {
		return
	}
	p := pod.DeepCopy()
	p.Status = st
	got, err := w.agent.cfg.Client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{})
	switch {
	case err == nil:
		w.mu.Lock()
		w.written = &writtenStatus{desired: st, stored: got.Status}
		w.mu.Unlock()
	case apierrors.IsConflict(err):
		w.wakeAfter(100 * time.Millisecond)
	case apierrors.IsNotFound(err):
	default:
		w.agent.log.Warn("update pod status", "pod", w.key(), "err", err)
		w.wakeAfter(time.Second)
	}
}

// writtenStatus is the last status the worker wrote and what the apiserver
// stored.
type writtenStatus struct{ desired, stored corev1.PodStatus }

// desiredStatus computes the pod status from the containers' state, keeping
// what others own (the scheduler's and controllers' conditions, QoS class).
func (w *podWorker) desiredStatus(pod *corev1.Pod) corev1.PodStatus {
	st := *pod.Status.DeepCopy()
	w.mu.Lock()
	defer w.mu.Unlock()
	host := w.node.clusterAddr().String()
	st.HostIP, st.HostIPs = host, []corev1.HostIP{{IP: host}}
	if w.ip.IsValid() {
		ip := w.agent.cfg.Network.ClusterAddr(w.ip).String()
		st.PodIP, st.PodIPs = ip, []corev1.PodIP{{IP: ip}}
	}
	if st.StartTime == nil {
		t := metaTime(w.startTime)
		st.StartTime = &t
	}
	allReady, started, allDone, failed := true, false, true, false
	var simulated []string
	st.ContainerStatuses = nil
	for _, spec := range pod.Spec.Containers {
		c := w.containers[spec.Name]
		if c == nil {
			c = &container{name: spec.Name}
		}
		st.ContainerStatuses = append(st.ContainerStatuses, containerStatus(spec, c))
		allReady = allReady && c.ready
		started = started || c.proc != nil || c.restarts > 0 || c.simulated != ""
		allDone = allDone && c.terminated != nil
		failed = failed || c.terminated != nil && c.terminated.ExitCode != 0
		if c.simulated != "" {
			simulated = append(simulated, c.simulated)
		}
	}
	st.InitContainerStatuses = nil
	for _, spec := range pod.Spec.InitContainers {
		st.InitContainerStatuses = append(st.InitContainerStatuses, corev1.ContainerStatus{
			Name: spec.Name, Image: spec.Image, ImageID: imageID(spec.Image), Ready: true,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed",
				Message: "init container simulated: not run"}},
		})
	}
	switch {
	case allDone && failed:
		st.Phase = corev1.PodFailed
	case allDone:
		st.Phase = corev1.PodSucceeded
	case started:
		st.Phase = corev1.PodRunning
	default:
		st.Phase = corev1.PodPending
	}
	ready := corev1.ConditionFalse
	if allReady {
		ready = corev1.ConditionTrue
	}
	setCondition(&st, corev1.PodReadyToStartContainers, corev1.ConditionTrue, "", "")
	setCondition(&st, corev1.PodInitialized, corev1.ConditionTrue, "", "")
	setCondition(&st, corev1.ContainersReady, ready, "", "")
	setCondition(&st, corev1.PodReady, ready, "", "")
	if len(simulated) > 0 {
		setCondition(&st, ConditionSimulated, corev1.ConditionTrue, "NotRun", strings.Join(simulated, "; "))
	}
	return st
}

func containerStatus(spec corev1.Container, c *container) corev1.ContainerStatus {
	cs := corev1.ContainerStatus{
		Name: spec.Name, Image: spec.Image, ImageID: imageID(spec.Image),
		RestartCount: c.restarts, Ready: c.ready, Started: new(c.started),
	}
	switch {
	case c.simulated != "":
		cs.ContainerID = "tenantkit://simulated/" + spec.Name
		cs.State.Running = &corev1.ContainerStateRunning{StartedAt: metaTime(c.startedAt)}
	case c.proc != nil:
		cs.ContainerID = containerID(c.proc)
		cs.State.Running = &corev1.ContainerStateRunning{StartedAt: metaTime(c.startedAt)}
	case c.terminated != nil:
		cs.State.Terminated = c.terminated.DeepCopy()
	case c.waiting != nil:
		cs.State.Waiting = c.waiting.DeepCopy()
	default:
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}
	}
	if c.lastTerm != nil {
		cs.LastTerminationState.Terminated = c.lastTerm.DeepCopy()
	}
	return cs
}

func imageID(image string) string { return "tenantkit://" + image }

// setCondition sets a condition, keeping its transition time when the
// status does not change.
func setCondition(st *corev1.PodStatus, t corev1.PodConditionType, s corev1.ConditionStatus, reason, msg string) {
	for i := range st.Conditions {
		c := &st.Conditions[i]
		if c.Type != t {
			continue
		}
		if c.Status != s {
			c.LastTransitionTime = metaTime(time.Now())
		}
		c.Status, c.Reason, c.Message = s, reason, msg
		return
	}
	st.Conditions = append(st.Conditions, corev1.PodCondition{Type: t, Status: s, Reason: reason, Message: msg,
		LastTransitionTime: metaTime(time.Now())})
}

// metaTime truncates to seconds, the precision the API keeps, so that a
// status read back compares equal to the one written.
func metaTime(t time.Time) metav1.Time { return metav1.NewTime(t.Truncate(time.Second)) }
