package gpushare

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// HAMi's admission webhook (pkg/scheduler/webhook.go Handle and
// pkg/device/nvidia/device.go MutateAdmission @v2.10.0), as far as the pod
// spec decides it: which pods it sees, which it refuses, and the defaults
// it writes into the ones it admits. Its ResourceQuota check depends on the
// namespace's quota and usage, which a pod does not show: not modelled
// here (Ledger.Fit applies the scheduler's quota check).

const (
	// webhookLabel is the label the chart's objectSelector and
	// namespaceSelector skip on the value "ignore"
	// (charts/hami/templates/scheduler/webhook.yaml).
	webhookLabel = "hami.io/webhook"
	// hamiSchedulerName is the chart's schedulerName, which Handle
	// writes into the pods it admits with a GPU resource.
	hamiSchedulerName = "hami-scheduler"
)

// webhookAdmission is HAMi's webhook on pod, in Handle's order. It
// returns whether the webhook writes its defaults into the pod's
// containers, or the *WebhookError of a pod it refuses. The chart's
// objectSelector skips pods labelled hami.io/webhook: ignore; Handle
// refuses a pod without containers, then passes untouched a pod naming a
// scheduler other than the default one (the chart's
// forceOverwriteDefaultScheduler: true) or HAMi's; then it refuses a
// memory percentage outside 0–100 in any container, init containers first
// (validateMemoryPercentage, which reads Quantity.Value(), so 100.5 is
// 101), and, for a pod with a GPU resource after the webhook's defaults, a
// privileged container and a pod that already names its node.
func webhookAdmission(pod *corev1.Pod, cfg *Config) (mutates bool, err error) {
	key := pod.Namespace + "/" + pod.Name
	switch {
	case pod.Labels[webhookLabel] == "ignore":
		return false, nil
	case len(pod.Spec.Containers) == 0:
		return false, &WebhookError{Pod: key, Reason: "pod has no containers"}
	}
	switch pod.Spec.SchedulerName {
	case "", corev1.DefaultSchedulerName, hamiSchedulerName:
	default:
		return false, nil
	}
	pct := cfg.Resources.MemoryPercentage
	hasResource := false
	for _, list := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			c := &list[i]
			if q, ok := lookup(c, pct); ok {
				if v := q.Value(); v < 0 || v > 100 {
					return false, &WebhookError{Pod: key, Container: c.Name, Resource: pct,
						Reason: fmt.Sprintf("%s (%d) is not an integer between 0 and 100", q.String(), v)}
				}
			}
			addCount, addCores := webhookDefaults(c, cfg)
			hasResource = hasResource || inLimits(c, cfg.Resources.GPU) || addCount > 0 || addCores > 0
		}
	}
	if !hasResource {
		return true, nil
	}
	if name, ok := privilegedContainer(pod); ok {
		return false, &WebhookError{Pod: key, Container: name, Reason: "container " + name + " is privileged"}
	}
	if pod.Spec.NodeName != "" {
		return false, &WebhookError{Pod: key, Reason: "pod has node assigned (" + pod.Spec.NodeName + ")"}
	}
	return true, nil
}

// privilegedContainer returns the first privileged container, init
// containers first, as Handle's privilegedContainerName does.
func privilegedContainer(pod *corev1.Pod) (string, bool) {
	for _, list := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range list {
			if sc := c.SecurityContext; sc != nil && sc.Privileged != nil && *sc.Privileged {
				return c.Name, true
			}
		}
	}
	return "", false
}

// webhookDefaults returns the GPU count and cores HAMi's webhook writes
// into container c (0 where it writes none): mutateContainerResource gives
// a container with gpumem, gpumem-percentage or gpucores in its limits but
// no GPU count there cfg.DefaultGPUNum GPUs; defaultExclusiveCoreIfNeeded
// gives a container with a GPU count (limits or requests, after the first
// default) and no gpucores gpucores 100 when its memory is a whole card: a
// percentage of 100, or neither gpumem nor a percentage.
func webhookDefaults(c *corev1.Container, cfg *Config) (addCount, addCores int64) {
	rn := cfg.Resources
	if !inLimits(c, rn.GPU) && (inLimits(c, rn.Cores) || inLimits(c, rn.Memory) || inLimits(c, rn.MemoryPercentage)) {
		addCount = int64(cfg.DefaultGPUNum)
	}
	_, hasCount := lookup(c, rn.GPU)
	_, hasCores := lookup(c, rn.Cores)
	if (!hasCount && addCount == 0) || hasCores {
		return addCount, 0
	}
	if q, ok := lookup(c, rn.MemoryPercentage); ok {
		if q.Value() == 100 {
			addCores = 100
		}
	} else if _, ok := lookup(c, rn.Memory); !ok {
		addCores = 100
	}
	return addCount, addCores
}

// quantity is n as the webhook writes it.
func quantity(n int64) resource.Quantity { return *resource.NewQuantity(n, resource.DecimalSI) }
