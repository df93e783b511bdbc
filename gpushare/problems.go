package gpushare

import (
	"fmt"
	"strings"
)

// DropReason says why the ledger leaves an object, or part of one, out of
// its accounting. HAMi's scheduler leaves the same things out, silently;
// the ledger lists them in Problems.
type DropReason string

// Reasons an object is left out.
const (
	// DropMalformedRegistration: a node's hami.io/node-nvidia-register or
	// hami.io/device-cordon does not decode; the node has no GPUs.
	DropMalformedRegistration DropReason = "MalformedRegistration"
	// DropMalformedAllocation: a pod's hami.io/vgpu-devices-allocated does
	// not decode; the pod is not counted.
	DropMalformedAllocation DropReason = "MalformedAllocation"
	// DropAllocationWithoutNode: a pod that has not finished carries
	// hami.io/vgpu-devices-allocated but no hami.io/vgpu-node; the pod is
	// not counted.
	DropAllocationWithoutNode DropReason = "AllocationWithoutNode"
	// DropNodeNotRegistered: a counted pod names a node that registers no
	// GPUs (yet); its shares count nowhere until the node registers.
	DropNodeNotRegistered DropReason = "NodeNotRegistered"
	// DropUnknownGPU: a counted pod has shares on GPUs its node does not
	// register; those shares count nowhere.
	DropUnknownGPU DropReason = "UnknownGPU"
	// DropTerminatingUnseen: a pod first seen with a deletionTimestamp;
	// HAMi does not count it (a pod counted before it began terminating
	// keeps counting).
	DropTerminatingUnseen DropReason = "TerminatingUnseen"
)

// ObjectError reports a Node or Pod the ledger leaves out, wholly or in
// part, and why. It wraps the cause: an *AnnotationError (errors.Is
// ErrMalformedAnnotation), ErrAllocationWithoutNode, ErrTerminatingUnseen,
// ErrUnknownNode or ErrUnknownGPU.
type ObjectError struct {
	// Object is "node/<name>" or "pod/<namespace>/<name>".
	Object string
	// Reason says what is left out and why.
	Reason DropReason
	// Err is the cause.
	Err error
}

// Error describes the failure in one line.
func (e *ObjectError) Error() string {
	kind, name, _ := strings.Cut(e.Object, "/")
	return kind + " " + name + ": " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *ObjectError) Unwrap() error { return e.Err }

// Problems returns every object the ledger leaves out, wholly or in part,
// keyed by ObjectError.Object: nodes whose registration does not decode,
// pods whose allocation does not decode or names no node, pods first seen
// terminating, and counted pods
// whose shares land on no registered node or GPU.
func (l *Ledger) Problems() map[string]*ObjectError {
	l.mu.RLock()
	defer l.mu.RUnlock()
	out := make(map[string]*ObjectError, len(l.problems))
	for k, v := range l.problems {
		out[k] = v
	}
	for _, p := range l.pods {
		if e := l.unplacedLocked(p); e != nil {
			out[e.Object] = e
		}
	}
	return out
}

// unplacedLocked reports a counted pod's shares that count nowhere.
func (l *Ledger) unplacedLocked(p *podState) *ObjectError {
	obj := "pod/" + p.podKey.String()
	n := l.nodes[p.node]
	if n == nil || !n.registered || len(n.gpus) == 0 {
		return &ObjectError{Object: obj, Reason: DropNodeNotRegistered,
			Err: fmt.Errorf("node %s registers no GPUs: %w", p.node, ErrUnknownNode)}
	}
	var missing []string
	for _, c := range p.contrib {
		if n.gpuIndex(c.id) < 0 {
			missing = append(missing, c.id)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return &ObjectError{Object: obj, Reason: DropUnknownGPU,
		Err: fmt.Errorf("node %s does not register %s: %w", p.node, strings.Join(missing, ", "), ErrUnknownGPU)}
}

// problem returns the recorded problem of an object as an error, nil when
// there is none.
func (l *Ledger) problem(key string) error {
	if p := l.problems[key]; p != nil {
		return p
	}
	return nil
}
