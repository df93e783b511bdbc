package gpushare

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// Counts reports whether HAMi's scheduler counts a pod's allocation: it has
// hami.io/vgpu-node and hami.io/vgpu-devices-allocated and is neither
// Succeeded nor Failed. The bind phase is not consulted. A terminating pod
// (deletionTimestamp set) counts only if it was counted before it began
// terminating, which Counts cannot tell: the Ledger keeps that history
// (SetPod).
func Counts(pod *corev1.Pod) bool {
	if pod.Annotations[AnnotationNode] == "" {
		return false
	}
	if _, ok := pod.Annotations[AnnotationAllocated]; !ok {
		return false
	}
	return !finished(pod)
}

// terminating is IsPodTerminating (pkg/util/util.go:307@v2.10.0).
func terminating(pod *corev1.Pod) bool { return pod.DeletionTimestamp != nil }

func finished(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

// InitContainersSucceeded reports whether every init container of the pod
// has exited with code 0 (HAMi v2.10's AllInitContainersSucceeded). A pod
// without init containers reports true.
func InitContainersSucceeded(pod *corev1.Pod) bool {
	for _, c := range pod.Spec.InitContainers {
		ok := false
		for _, s := range pod.Status.InitContainerStatuses {
			if s.Name == c.Name {
				ok = s.State.Terminated != nil && s.State.Terminated.ExitCode == 0
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// SetPod applies a Pod: counted pods (see Counts) add their
// hami.io/vgpu-devices-allocated to their node's GPUs, others are removed.
// An allocation that does not decode, or that names no node on a pod that
// has not finished, is not counted (as HAMi does), is recorded in Problems,
// and is returned as an *ObjectError.
//
// SetPod follows the history HAMi's pod handler keeps (onAddPod and
// onUpdatePod, pkg/scheduler/scheduler.go:137-224@v2.10.0): a terminating
// pod keeps what it counted before, and one first seen terminating is not
// counted (listed in Problems as DropTerminatingUnseen); with
// Config.CollapseInitContainers, a pod's init-container entries stop
// counting only on an update after all init containers succeeded, never
// when the pod is first seen, and once they stop they do not come back.
func (l *Ledger) SetPod(pod *corev1.Pod) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.setPodLocked(pod)
}

func (l *Ledger) setPodLocked(pod *corev1.Pod) error {
	key := podKey{pod.Namespace, pod.Name}
	l.clearProblem("pod/", key)
	if !Counts(pod) {
		l.removePodLocked(key)
		if _, ok := pod.Annotations[AnnotationAllocated]; ok && pod.Annotations[AnnotationNode] == "" && !finished(pod) {
			pe := &ObjectError{Object: "pod/" + key.String(), Reason: DropAllocationWithoutNode,
				Err: fmt.Errorf("%s without %s: %w", AnnotationAllocated, AnnotationNode, ErrAllocationWithoutNode)}
			l.problems[pe.Object] = pe
			return pe
		}
		return nil
	}
	node, raw := pod.Annotations[AnnotationNode], pod.Annotations[AnnotationAllocated]
	old := l.pods[key]
	if terminating(pod) {
		if old != nil {
			return nil // UpdatePod: the cached devices stay
		}
		pe := &ObjectError{Object: "pod/" + key.String(), Reason: DropTerminatingUnseen,
			Err: fmt.Errorf("first seen with a deletionTimestamp: %w", ErrTerminatingUnseen)}
		l.problems[pe.Object] = pe
		return pe
	}
	// AllInitContainersSucceeded shrinks a pod HAMi already holds
	// (onUpdatePod); InitContainerResourceReleased never reverts.
	initDone := len(pod.Spec.InitContainers) == 0 ||
		(old != nil && (old.initDone || InitContainersSucceeded(pod)))
	if old != nil && old.node == node && old.raw == raw && old.initDone == initDone {
		return nil
	}
	alloc, err := DecodePodDevices(raw)
	if err != nil {
		pe := &ObjectError{Object: "pod/" + key.String(), Reason: DropMalformedAllocation, Err: err}
		l.problems[pe.Object] = pe
		l.removePodLocked(key)
		l.log.Debug("gpushare: pod allocation", "pod", key.String(), "err", err)
		return pe
	}
	p := &podState{
		podKey: key, node: node, raw: raw, alloc: alloc,
		initCount: len(pod.Spec.InitContainers),
		ctrCount:  len(pod.Spec.InitContainers) + len(pod.Spec.Containers),
		initDone:  initDone,
	}
	p.contrib = contributions(p, l.cfg.CollapseInitContainers)
	l.removePodLocked(key)
	l.addPodLocked(p)
	return nil
}

// clearProblem forgets a recorded problem; it builds the key only when
// there are problems at all.
func (l *Ledger) clearProblem(kind string, key podKey) {
	if len(l.problems) > 0 {
		delete(l.problems, kind+key.String())
	}
}

// DeletePod removes a pod's allocation.
func (l *Ledger) DeletePod(namespace, name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	key := podKey{namespace, name}
	l.clearProblem("pod/", key)
	l.removePodLocked(key)
}

func (l *Ledger) addPodLocked(p *podState) {
	l.pods[p.podKey] = p
	l.countUsageLocked(p, 1)
	n := l.nodes[p.node]
	if n == nil {
		n = &nodeState{name: p.node}
		l.nodes[p.node] = n
	}
	p.slot = len(n.pods)
	n.pods = append(n.pods, p)
	n.apply(p.contrib, 1)
	l.reindexLocked(n)
}

func (l *Ledger) removePodLocked(key podKey) {
	p := l.pods[key]
	if p == nil {
		return
	}
	delete(l.pods, key)
	l.countUsageLocked(p, -1)
	n := l.nodes[p.node]
	if n == nil {
		return
	}
	last := n.pods[len(n.pods)-1]
	n.pods[p.slot], last.slot = last, p.slot
	n.pods[len(n.pods)-1] = nil
	n.pods = n.pods[:len(n.pods)-1]
	n.apply(p.contrib, -1)
	l.reindexLocked(n)
	if !n.registered && len(n.pods) == 0 {
		delete(l.nodes, n.name)
	}
}

// contributions turns a pod's allocation into what it adds per GPU.
//
// Counting every entry (HAMi ≤ v2.9): each entry is one slot plus its
// memory and cores. Collapsing (v2.10): per GPU, memory and cores are the
// larger of the biggest init-container entry and the sum of the app
// entries; slots are the number of app entries, or 1 when only init
// containers use the GPU; once all init containers succeeded only app
// entries count. Entries are taken by position, as CollapseInitContainerUsage does
// (pkg/device/initContainer.go:36@v2.10.0): the first initCount entries
// are init containers' even when HAMi wrote no placeholder for a GPU-less
// container and the entries have shifted.
func contributions(p *podState, collapse bool) []contribution {
	initN := 0
	if collapse {
		initN = p.initCount
	}
	entries := 0
	for _, c := range p.alloc {
		entries += len(c)
	}
	// out[i].used holds the app sum while initMax[i] collects init maxima.
	out := make([]contribution, 0, entries)
	var initMax []Amount
	find := func(id string) int {
		for i := range out {
			if out[i].id == id {
				return i
			}
		}
		out = append(out, contribution{id: id})
		if initMax != nil {
			initMax = append(initMax, Amount{})
		}
		return len(out) - 1
	}
	for pos, c := range p.alloc {
		isInit := pos < initN
		if isInit && p.initDone {
			continue
		}
		if isInit && initMax == nil {
			initMax = make([]Amount, len(out), entries)
		}
		for _, d := range c {
			i := find(d.DeviceID())
			e := Amount{1, int64(d.MemoryMiB), int64(d.Cores)}
			if !isInit {
				out[i].used = out[i].used.Add(e)
				continue
			}
			m := &initMax[i]
			m.Slots, m.MemoryMiB, m.Cores = 1, max(m.MemoryMiB, e.MemoryMiB), max(m.Cores, e.Cores)
		}
	}
	for i := range initMax {
		u := &out[i].used
		u.Slots, u.MemoryMiB, u.Cores = max(u.Slots, initMax[i].Slots), max(u.MemoryMiB, initMax[i].MemoryMiB), max(u.Cores, initMax[i].Cores)
	}
	return out
}
