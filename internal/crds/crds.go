// Package crds installs CustomResourceDefinitions and waits until the
// apiserver serves them. It is the one installer behind the local
// environment (Velero's CRDs), its etcd layouts and cozystacktest, so all
// three mean the same by "installed".
package crds

import (
	"context"
	"errors"
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// Timeout bounds the wait for the apiserver to serve newly installed CRDs.
const Timeout = time.Minute

// Install creates each CRD, or updates an existing one to the given
// definition, then waits until every one is served: Established, and a
// list of each of its versions' resources answers (Established comes a
// moment before the REST endpoint does). It is safe to call again and
// stops when ctx is done.
func Install(ctx context.Context, rc *rest.Config, defs ...*apiextensionsv1.CustomResourceDefinition) error {
	ext, err := apiextensions.NewForConfig(rc)
	if err != nil {
		return fmt.Errorf("apiextensions client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return fmt.Errorf("dynamic client: %w", err)
	}
	for _, def := range defs {
		if err := apply(ctx, ext, def); err != nil {
			return err
		}
	}
	for _, def := range defs {
		if err := waitServed(ctx, ext, dyn, def); err != nil {
			return err
		}
	}
	return nil
}

// apply creates def, or updates the existing CRD of its name to def.
func apply(ctx context.Context, ext apiextensions.Interface, def *apiextensionsv1.CustomResourceDefinition) error {
	api := ext.ApiextensionsV1().CustomResourceDefinitions()
	_, err := api.Create(ctx, def.DeepCopy(), metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		cur, gerr := api.Get(ctx, def.Name, metav1.GetOptions{})
		if gerr != nil {
			return fmt.Errorf("read CRD %s: %w", def.Name, gerr)
		}
		upd := def.DeepCopy()
		upd.ResourceVersion = cur.ResourceVersion
		_, err = api.Update(ctx, upd, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("install CRD %s: %w", def.Name, err)
	}
	return nil
}

// waitServed polls until def is Established and its resources list.
func waitServed(ctx context.Context, ext apiextensions.Interface, dyn dynamic.Interface, def *apiextensionsv1.CustomResourceDefinition) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, Timeout, true, func(ctx context.Context) (bool, error) {
		cur, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, def.Name, metav1.GetOptions{})
		if err != nil {
			last = err
			return false, nil
		}
		if !established(cur) {
			last = errors.New("not established")
			return false, nil
		}
		for _, v := range def.Spec.Versions {
			if !v.Served {
				continue
			}
			gvr := schema.GroupVersionResource{Group: def.Spec.Group, Version: v.Name, Resource: def.Spec.Names.Plural}
			if _, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
				last = err
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil && last != nil {
		return fmt.Errorf("CRD %s not served: %w (last: %w)", def.Name, err, last)
	}
	if err != nil {
		return fmt.Errorf("CRD %s not served: %w", def.Name, err)
	}
	return nil
}

func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}
