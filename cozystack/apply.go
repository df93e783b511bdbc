package cozystack

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"
	sigsjson "sigs.k8s.io/json"

	"github.com/cozystack/tenantkit/tenant"
)

// kind tells the generic read and write paths how to handle one of the
// model's application types.
type kind[T any] struct {
	name    string
	gvr     schema.GroupVersionResource
	decode  func([]byte) (*T, error) // lenient: keeps unknown fields
	meta    func(*T) *metav1.ObjectMeta
	setSpec func(dst, src *T)
}

var kubernetesKind = kind[tenant.Kubernetes]{
	name:    tenant.KubernetesKind,
	gvr:     tenant.KubernetesResource,
	decode:  tenant.DecodeKubernetes,
	meta:    func(k *tenant.Kubernetes) *metav1.ObjectMeta { return &k.ObjectMeta },
	setSpec: func(dst, src *tenant.Kubernetes) { dst.Spec = src.Spec },
}

var tenantKind = kind[tenant.Tenant]{
	name:    tenant.TenantKind,
	gvr:     tenant.TenantResource,
	decode:  tenant.DecodeTenant,
	meta:    func(t *tenant.Tenant) *metav1.ObjectMeta { return &t.ObjectMeta },
	setSpec: func(dst, src *tenant.Tenant) { dst.Spec = src.Spec },
}

// apply creates obj or, if it exists, replaces the stored object's spec
// with obj's (keeping the fields of the stored object the model does not
// know) and merges obj's labels and annotations, retrying on conflicts. It
// returns the object as stored.
func apply[T any](ctx context.Context, dyn dynamic.Interface, k kind[T], obj *T) (*T, error) {
	m := k.meta(obj)
	ns, name := m.Namespace, m.Name
	res := dyn.Resource(k.gvr).Namespace(ns)
	u, err := toUnstructured(k, obj)
	if err != nil {
		return nil, err
	}
	u.SetResourceVersion("")
	u.SetUID("")
	created, err := res.Create(ctx, u, metav1.CreateOptions{})
	if err == nil {
		return fromUnstructured(k, created)
	}
	if !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("create %s %s/%s: %w", k.name, ns, name, err)
	}
	var updated *unstructured.Unstructured
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := res.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		stored, err := fromUnstructured(k, cur)
		if err != nil {
			return err
		}
		k.setSpec(stored, obj)
		sm := k.meta(stored)
		sm.Labels = merged(sm.Labels, m.Labels)
		sm.Annotations = merged(sm.Annotations, m.Annotations)
		next, err := toUnstructured(k, stored)
		if err != nil {
			return err
		}
		updated, err = res.Update(ctx, next, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("update %s %s/%s: %w", k.name, ns, name, err)
	}
	return fromUnstructured(k, updated)
}

// get reads one object; a missing one wraps ErrNotFound.
func get[T any](ctx context.Context, dyn dynamic.Interface, k kind[T], ns, name string) (*T, error) {
	u, err := dyn.Resource(k.gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("%w: %s %s/%s", ErrNotFound, k.gvr.Resource, ns, name)
	}
	if err != nil {
		return nil, fmt.Errorf("get %s %s/%s: %w", k.gvr.Resource, ns, name, err)
	}
	return fromUnstructured(k, u)
}

// list reads the objects of namespace ns, sorted by name (the apiserver's
// order).
func list[T any](ctx context.Context, dyn dynamic.Interface, k kind[T], ns string) ([]*T, error) {
	l, err := dyn.Resource(k.gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list %s in %s: %w", k.gvr.Resource, ns, err)
	}
	out := make([]*T, 0, len(l.Items))
	for i := range l.Items {
		obj, err := fromUnstructured(k, &l.Items[i])
		if err != nil {
			return nil, err
		}
		out = append(out, obj)
	}
	return out, nil
}

// remove deletes one object; a missing one is not an error.
func remove(ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource, ns, name string) error {
	err := dyn.Resource(gvr).Namespace(ns).Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete %s %s/%s: %w", gvr.Resource, ns, name, err)
	}
	return nil
}

// fromUnstructured decodes u with the model's lenient decoder, which keeps
// the fields the model does not know.
func fromUnstructured[T any](k kind[T], u *unstructured.Unstructured) (*T, error) {
	data, err := u.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("%w: %s %s/%s: %w", ErrMalformed, k.name, u.GetNamespace(), u.GetName(), err)
	}
	obj, err := k.decode(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %s %s/%s: %w", ErrMalformed, k.name, u.GetNamespace(), u.GetName(), err)
	}
	return obj, nil
}

// toUnstructured encodes obj, unknown fields included, for the dynamic
// client, with the kind's apiVersion and kind.
func toUnstructured[T any](k kind[T], obj *T) (*unstructured.Unstructured, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	u := &unstructured.Unstructured{}
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(data, &u.Object); err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	u.SetAPIVersion(tenant.APIVersion)
	u.SetKind(k.name)
	return u, nil
}

// merged returns base with add's entries set.
func merged(base, add map[string]string) map[string]string {
	if len(add) == 0 {
		return base
	}
	out := maps.Clone(base)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, add)
	return out
}
