package gpushare

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// ContainerRequest is what one container asks of HAMi, per GPU.
type ContainerRequest struct {
	// Name is the container's name.
	Name string
	// Init marks an init container.
	Init bool
	// Count is the number of GPUs, each a different card; 0 means the
	// container uses no GPU.
	Count int32
	// MemoryMiB is the memory per GPU, memoryFactor applied. When set it
	// wins over MemoryPercent.
	MemoryMiB int32
	// MemoryPercent is the memory per GPU as a percentage (1–100) of each
	// card's registered memory. 0 means unset (HAMi's sentinel 101). With
	// neither MemoryMiB nor MemoryPercent, a container takes the whole
	// card's memory, as HAMi does with defaultMemory 0.
	MemoryPercent int32
	// Cores is the compute share per GPU in percent (0–100); 100 asks for
	// an idle card and keeps it exclusive.
	Cores int32
}

// memoryOn resolves the request's memory on a card with total MiB, as
// HAMi's Fit does: MemoryMiB if set, else total × percent / 100.
func (c *ContainerRequest) memoryOn(total int32) int32 {
	switch {
	case c.MemoryMiB > 0:
		return c.MemoryMiB
	case c.MemoryPercent > 0:
		return int32(int64(total) * int64(c.MemoryPercent) / 100)
	}
	return total
}

// PodRequest is what a pod asks of HAMi.
type PodRequest struct {
	// Namespace and Name identify the pod (for allocations and messages).
	Namespace, Name string
	// Containers lists every container, init containers first, then app
	// containers, as HAMi's allocation string does since v2.9. Containers
	// without GPUs have Count 0 and keep their positions.
	Containers []ContainerRequest
	// Selectors are the pod's GPU constraints.
	Selectors Selectors
	// NodePolicy overrides the Config's node policy when set.
	NodePolicy NodePolicy
	// GPUPolicy overrides the Config's GPU policy when set.
	GPUPolicy GPUPolicy
	// Weights weigh the GPU score; the zero value means DefaultWeights().
	Weights Weights
	// Warnings lists what NewPodRequest read as HAMi does but is odd: a
	// value HAMi's scheduler clamps or ignores, one per container and
	// resource (see NewPodRequest). Config.StrictRequests turns the first
	// into NewPodRequest's error. What HAMi's webhook refuses is never a
	// warning: NewPodRequest returns a *WebhookError.
	Warnings []*RequestError
}

// GPUs returns the number of GPU entries the pod needs: the sum of Count.
func (r *PodRequest) GPUs() int {
	n := 0
	for _, c := range r.Containers {
		n += int(c.Count)
	}
	return n
}

func (r *PodRequest) key() string { return r.Namespace + "/" + r.Name }

// validate checks r's ranges: counts, memory and cores not negative,
// percentages and cores at most 100, and policies HAMi knows. Errors wrap
// ErrInvalidRequest.
func (r *PodRequest) validate() error {
	if r.GPUs() == 0 {
		return &RequestError{Pod: r.key(), Resource: ResourceGPU, Reason: "no container asks for a GPU"}
	}
	for _, c := range r.Containers {
		bad := func(res, why string) error {
			return &RequestError{Pod: r.key(), Container: c.Name, Resource: res, Reason: why}
		}
		switch {
		case c.Count < 0:
			return bad(ResourceGPU, "negative")
		case c.MemoryMiB < 0:
			return bad(ResourceMemory, "negative")
		case c.MemoryPercent < 0 || c.MemoryPercent > 100:
			return bad(ResourceMemoryPercentage, fmt.Sprintf("%d is outside 0–100", c.MemoryPercent))
		case c.Cores < 0 || c.Cores > 100:
			return bad(ResourceCores, fmt.Sprintf("%d is outside 0–100", c.Cores))
		}
	}
	if r.NodePolicy != "" {
		if _, err := ParseNodePolicy(string(r.NodePolicy)); err != nil {
			return err
		}
	}
	if r.GPUPolicy != "" {
		if _, err := compileGPUPolicy(r.GPUPolicy); err != nil {
			return err
		}
	}
	if w := r.Weights; w != (Weights{}) && (w.Slot < 0 || w.Core < 0 || w.Memory < 0) {
		return &RequestError{Pod: r.key(), Resource: AnnotationScoringWeights, Reason: "negative weight"}
	}
	return nil
}

// NewPodRequest derives a pod's request the way HAMi v2.10's admission
// webhook and scheduler do (Handle and MutateAdmission, then
// GenerateResourceRequests, in pkg/scheduler/webhook.go and
// pkg/device/nvidia/device.go@v2.10.0).
//
// Unless cfg.SkipWebhook, the webhook comes first, for the pods it sees
// (not those labelled hami.io/webhook: ignore). A pod it refuses is a
// *WebhookError (errors.Is ErrWebhookRefused), never a request: no
// containers; then, unless the pod names a scheduler other than the
// default one or hami-scheduler (the webhook passes it untouched), a
// gpumem-percentage outside 0–100 in any container, whatever its GPU
// count, and, in a pod with a GPU resource, a privileged container or a
// spec.nodeName already set. A pod it admits gets its defaults: a
// container with gpumem, gpumem-percentage or gpucores in its limits but no
// nvidia.com/gpu there gets cfg.DefaultGPUNum GPUs, and one that takes a
// whole card's memory (percentage 100, or neither gpumem nor percentage)
// without gpucores gets gpucores 100 — an exclusive card.
//
// Then, as the scheduler reads it:
//
//   - every resource is read from limits, then requests;
//   - gpumem wins over gpumem-percentage; a percentage of 0 is unset;
//   - with neither, the container gets cfg.DefaultMemoryMiB, or 100 % when
//     that is 0;
//   - gpucores defaults to cfg.DefaultCores.
//
// Where HAMi bends a value, NewPodRequest bends it the same way and lists
// the oddity in PodRequest.Warnings (a *RequestError naming the container,
// the resource and what HAMi does): a percentage over 100 or cores over 100
// are clamped to 100 (a percentage only reaches the scheduler so without
// the webhook); a negative or fractional percentage is ignored; a gpumem
// that is not a whole number of MiB within int32 (after memoryFactor), or a
// GPU count that is not a whole number or is negative, drops the
// container's GPU request. With cfg.StrictRequests the first oddity is
// returned as the error instead. Two things are always a *RequestError:
// gpucores that HAMi reads as negative (a negative value, or one its int32
// conversion turns negative: HAMi would subtract them from the card's
// usage), and an unknown policy name in the pod's annotations. Containers
// are listed init containers first. The pod's selection and policy
// annotations are read too.
func NewPodRequest(pod *corev1.Pod, cfg Config) (PodRequest, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return PodRequest{}, err
	}
	hook := false
	if !cfg.SkipWebhook {
		if hook, err = webhookAdmission(pod, &cfg); err != nil {
			return PodRequest{}, err
		}
	}
	r := PodRequest{Namespace: pod.Namespace, Name: pod.Name}
	for _, list := range []struct {
		ctrs []corev1.Container
		init bool
	}{{pod.Spec.InitContainers, true}, {pod.Spec.Containers, false}} {
		for i := range list.ctrs {
			c, odd, err := containerRequest(&list.ctrs[i], list.init, &cfg, hook)
			if err != nil {
				return PodRequest{}, withPod(err, r.key())
			}
			for _, o := range odd {
				o.Pod = r.key()
			}
			if cfg.StrictRequests && len(odd) > 0 {
				return PodRequest{}, odd[0]
			}
			r.Warnings = append(r.Warnings, odd...)
			r.Containers = append(r.Containers, c)
		}
	}
	if err := r.readAnnotations(pod.Annotations); err != nil {
		return PodRequest{}, err
	}
	return r, nil
}

func (r *PodRequest) readAnnotations(annos map[string]string) error {
	sel, err := DecodeSelectors(annos)
	if err != nil {
		var ae *AnnotationError
		if errors.As(err, &ae) {
			return &RequestError{Pod: r.key(), Resource: ae.Key, Reason: ae.Reason}
		}
		return err
	}
	r.Selectors = sel
	if v, ok := annos[AnnotationNodePolicy]; ok {
		p, err := ParseNodePolicy(v)
		if err != nil {
			return withPod(err, r.key())
		}
		r.NodePolicy = p
	}
	if v, ok := annos[AnnotationGPUPolicy]; ok {
		p, err := ParseGPUPolicy(v)
		if err != nil {
			return withPod(err, r.key())
		}
		r.GPUPolicy = p
	}
	if v, ok := annos[AnnotationScoringWeights]; ok {
		w, err := ParseWeights(v)
		if err != nil {
			return withPod(err, r.key())
		}
		r.Weights = w
	}
	return nil
}

func withPod(err error, pod string) error {
	if re, ok := err.(*RequestError); ok {
		re.Pod = pod
	}
	return err
}
