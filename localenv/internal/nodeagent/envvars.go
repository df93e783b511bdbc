package nodeagent

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type envVar struct{ name, value string }

// containerEnv computes a container's environment as the kubelet does:
// envFrom sources first, then env entries (which win), with $(VAR)
// references to earlier variables expanded.
func (w *podWorker) containerEnv(ctx context.Context, pod *corev1.Pod, c corev1.Container) ([]envVar, error) {
	var env []envVar
	set := func(name, value string) {
		for i := range env {
			if env[i].name == name {
				env[i].value = value
				return
			}
		}
		env = append(env, envVar{name, value})
	}
	for _, from := range c.EnvFrom {
		data, err := w.envSource(ctx, pod.Namespace, from)
		if err != nil {
			return nil, err
		}
		for k, v := range data {
			set(from.Prefix+k, v)
		}
	}
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			set(e.Name, Expand(e.Value, envLookup(env)))
			continue
		}
		v, err := w.envValueFrom(ctx, pod, e.ValueFrom)
		if err != nil {
			return nil, fmt.Errorf("env %s: %w", e.Name, err)
		}
		set(e.Name, v)
	}
	return env, nil
}

func envLookup(env []envVar) func(string) (string, bool) {
	return func(name string) (string, bool) {
		for _, e := range env {
			if e.name == name {
				return e.value, true
			}
		}
		return "", false
	}
}

func (w *podWorker) envSource(ctx context.Context, ns string, from corev1.EnvFromSource) (map[string]string, error) {
	cs := w.agent.cfg.Client.CoreV1()
	switch {
	case from.ConfigMapRef != nil:
		cm, err := cs.ConfigMaps(ns).Get(ctx, from.ConfigMapRef.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) && from.ConfigMapRef.Optional != nil && *from.ConfigMapRef.Optional {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("configmap %s: %w", from.ConfigMapRef.Name, err)
		}
		return cm.Data, nil
	case from.SecretRef != nil:
		s, err := cs.Secrets(ns).Get(ctx, from.SecretRef.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) && from.SecretRef.Optional != nil && *from.SecretRef.Optional {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("secret %s: %w", from.SecretRef.Name, err)
		}
		out := map[string]string{}
		for k, v := range s.Data {
			out[k] = string(v)
		}
		return out, nil
	}
	return nil, nil
}

func (w *podWorker) envValueFrom(ctx context.Context, pod *corev1.Pod, src *corev1.EnvVarSource) (string, error) {
	cs := w.agent.cfg.Client.CoreV1()
	switch {
	case src.FieldRef != nil:
		return w.fieldValue(pod, src.FieldRef.FieldPath)
	case src.ConfigMapKeyRef != nil:
		ref := src.ConfigMapKeyRef
		cm, err := cs.ConfigMaps(pod.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			return optional(ref.Optional, fmt.Errorf("configmap %s: %w", ref.Name, err))
		}
		v, ok := cm.Data[ref.Key]
		if !ok {
			return optional(ref.Optional, fmt.Errorf("configmap %s has no key %q", ref.Name, ref.Key))
		}
		return v, nil
	case src.SecretKeyRef != nil:
		ref := src.SecretKeyRef
		s, err := cs.Secrets(pod.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			return optional(ref.Optional, fmt.Errorf("secret %s: %w", ref.Name, err))
		}
		v, ok := s.Data[ref.Key]
		if !ok {
			return optional(ref.Optional, fmt.Errorf("secret %s has no key %q", ref.Name, ref.Key))
		}
		return string(v), nil
	}
	// resourceFieldRef and file keys: not simulated.
	return "", nil
}

func optional(opt *bool, err error) (string, error) {
	if opt != nil && *opt {
		return "", nil
	}
	return "", err
}

// fieldValue resolves a downward API field path.
func (w *podWorker) fieldValue(pod *corev1.Pod, fieldPath string) (string, error) {
	switch fieldPath {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	// Inside a pod, its IP is the loopback address its processes can bind,
	// not the cluster twin in status.podIP (see loopnet).
	case "status.hostIP", "status.hostIPs":
		return w.node.subnet.NodeAddr().String(), nil
	case "status.podIP", "status.podIPs":
		return w.podIP().String(), nil
	}
	for prefix, m := range map[string]map[string]string{"metadata.labels": pod.Labels, "metadata.annotations": pod.Annotations} {
		if key, ok := strings.CutPrefix(fieldPath, prefix+"['"); ok {
			return m[strings.TrimSuffix(key, "']")], nil
		}
	}
	return "", fmt.Errorf("unsupported field path %q", fieldPath)
}

// Expand expands $(VAR) references in s the way the kubelet expands a
// container's command, args and env values: a reference to a defined
// variable is replaced by its value, an undefined one is left as it is, and
// $$ is an escaped $.
func Expand(s string, lookup func(string) (string, bool)) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				b.WriteString(s[i:])
				return b.String()
			}
			name := s[i+2 : i+2+end]
			if v, ok := lookup(name); ok && name != "" {
				b.WriteString(v)
			} else {
				b.WriteString(s[i : i+3+end])
			}
			i += 2 + end
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}
