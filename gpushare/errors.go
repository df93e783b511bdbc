package gpushare

import (
	"errors"
	"fmt"
)

// Sentinel errors to branch on with errors.Is. The typed errors below wrap
// one of them.
var (
	// ErrMalformedAnnotation is returned when an annotation value does not
	// follow the format HAMi writes. It is wrapped by *AnnotationError.
	ErrMalformedAnnotation = errors.New("gpushare: malformed annotation")

	// ErrInvalidRequest is returned when a pod asks for GPU resources in a
	// way HAMi would reject or silently drop (a gpumem that is not a whole
	// number of MiB, a percentage outside 0–100, an unknown policy). It is
	// wrapped by *RequestError.
	ErrInvalidRequest = errors.New("gpushare: invalid GPU request")

	// ErrWebhookRefused is returned by NewPodRequest for a pod HAMi's
	// admission webhook refuses (Config.SkipWebhook unset): such a pod is
	// never created, so it never fits. It is wrapped by *WebhookError.
	ErrWebhookRefused = errors.New("gpushare: HAMi's admission webhook refuses the pod")

	// ErrNoFit is returned when no node can host the pod. It is wrapped by
	// *FitError, which says what blocks the pod, then why per node and per
	// GPU.
	ErrNoFit = errors.New("gpushare: pod fits no node")

	// ErrOverAllocation is returned when an allocation would take more
	// memory, cores or slots than a GPU has. The ledger refuses it and
	// changes nothing. It is wrapped by *AllocationError.
	ErrOverAllocation = errors.New("gpushare: allocation exceeds GPU capacity")

	// ErrGPUConflict is returned when an allocation breaks a per-GPU rule
	// other than room: an unhealthy or cordoned GPU, a 100-core share on a
	// used card, a 0-core share on a card whose cores are all allocated, a
	// used card under the mutex policy, or one GPU twice in a container.
	// The ledger refuses it and changes nothing. It is wrapped by
	// *AllocationError.
	ErrGPUConflict = errors.New("gpushare: allocation breaks a GPU sharing rule")

	// ErrQuotaExceeded is wrapped by an *AllocationError whose placement
	// would take the pod's namespace past a ResourceQuota limit HAMi
	// enforces (AllocationError.Quota names it).
	ErrQuotaExceeded = errors.New("gpushare: allocation exceeds the namespace's GPU quota")

	// ErrNotModelled is wrapped by a *NotModelledError: Fit refuses to
	// answer where HAMi decides by a part of its procedure gpushare does
	// not model (dynamic MIG, topology-aware pair scores).
	ErrNotModelled = errors.New("gpushare: decision not modelled")

	// ErrAllocationWithoutNode is returned when a pod carries an allocation
	// but no hami.io/vgpu-node, so neither HAMi nor the ledger counts it.
	// It is wrapped by *ObjectError.
	ErrAllocationWithoutNode = errors.New("gpushare: allocation without a node")

	// ErrTerminatingUnseen is returned when a pod is first seen with a
	// deletionTimestamp: HAMi's pod handler does not count it, though it
	// may still hold its GPUs. It is wrapped by *ObjectError.
	ErrTerminatingUnseen = errors.New("gpushare: pod first seen terminating")

	// ErrUnknownNode is returned when the ledger has no GPU node of that
	// name.
	ErrUnknownNode = errors.New("gpushare: unknown node")

	// ErrUnknownGPU is returned when an allocation names a GPU the node
	// does not register.
	ErrUnknownGPU = errors.New("gpushare: unknown GPU")

	// ErrPodExists is returned when the ledger already holds an allocation
	// for the pod.
	ErrPodExists = errors.New("gpushare: pod already allocated")

	// ErrInvalidConfig is returned when a Config, addon setting or plugin
	// setting is out of range.
	ErrInvalidConfig = errors.New("gpushare: invalid configuration")

	// ErrUnencodable is returned when a value cannot be written in the
	// requested format, e.g. a GPU type containing a comma in the
	// colon/comma registration string.
	ErrUnencodable = errors.New("gpushare: value cannot be encoded in this format")

	// ErrUnknownImage is returned when the glibc compatibility table has no
	// row for a workload base image.
	ErrUnknownImage = errors.New("gpushare: unknown base image")
)

// AnnotationError reports an annotation value that could not be decoded.
// The value itself is kept short in the message; Value holds it whole.
type AnnotationError struct {
	// Key is the annotation key, e.g. "hami.io/node-nvidia-register".
	Key string
	// Value is the offending value.
	Value string
	// Reason says what is wrong, e.g. `device 2: count "x": not a number`.
	Reason string
}

// Error describes the failure in one line.
func (e *AnnotationError) Error() string {
	return fmt.Sprintf("%s: %s (value %q)", e.Key, e.Reason, clip(e.Value, 80))
}

// Unwrap returns ErrMalformedAnnotation.
func (e *AnnotationError) Unwrap() error { return ErrMalformedAnnotation }

// RequestError reports a container whose GPU request is invalid.
type RequestError struct {
	// Pod is "namespace/name" when known.
	Pod string
	// Container is the container's name; empty for pod-level annotations.
	Container string
	// Resource is the resource or annotation at fault, e.g.
	// "nvidia.com/gpumem".
	Resource string
	// Reason says what is wrong.
	Reason string
}

// Error describes the failure in one line.
func (e *RequestError) Error() string {
	where := e.Pod
	if e.Container != "" {
		if where != "" {
			where += " "
		}
		where += "container " + e.Container
	}
	if where == "" {
		return fmt.Sprintf("%s: %s", e.Resource, e.Reason)
	}
	return fmt.Sprintf("%s: %s: %s", where, e.Resource, e.Reason)
}

// Unwrap returns ErrInvalidRequest.
func (e *RequestError) Unwrap() error { return ErrInvalidRequest }

// WebhookError reports a pod HAMi's admission webhook refuses, in the
// webhook's words.
type WebhookError struct {
	// Pod is "namespace/name".
	Pod string
	// Container is the container at fault; empty for the pod as a whole.
	Container string
	// Resource is the resource at fault, e.g.
	// "nvidia.com/gpumem-percentage"; empty when none is.
	Resource string
	// Reason says why the webhook refuses, e.g. "container main is
	// privileged".
	Reason string
}

// Error describes the refusal in one line.
func (e *WebhookError) Error() string {
	msg := e.Pod + ": HAMi's admission webhook refuses the pod"
	if e.Resource != "" {
		msg += ": container " + e.Container + ": " + e.Resource
	}
	return msg + ": " + e.Reason
}

// Unwrap returns ErrWebhookRefused.
func (e *WebhookError) Unwrap() error { return ErrWebhookRefused }

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
