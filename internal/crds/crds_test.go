package crds_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/cozystack/tenantkit/internal/crds"
	"github.com/cozystack/tenantkit/localenv"
)

// TestInstall installs an open CRD twice (the second call updates it) and
// uses it at once: when Install returns, the resource is served, including
// its status and scale subresources.
func TestInstall(t *testing.T) {
	env := localenv.StartT(t, localenv.Config{EtcdMembers: 1})
	ctx := t.Context()
	widget := crds.Open{Group: "example.tenantkit.io", Version: "v1", Kind: "Widget", Plural: "widgets", Singular: "widget", Scale: true}

	require.NoError(t, crds.Install(ctx, env.RESTConfig(), widget.Definition()))
	require.NoError(t, crds.Install(ctx, env.RESTConfig(), widget.Definition()), "a second install updates in place")

	dyn := dynamic.NewForConfigOrDie(env.RESTConfig())
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.tenantkit.io/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w"},
		"spec":     map[string]any{"replicas": int64(2), "anything": "kept"},
	}}
	created, err := dyn.Resource(widget.GVR()).Namespace("default").Create(ctx, obj, metav1.CreateOptions{})
	require.NoError(t, err)
	require.Equal(t, "kept", created.Object["spec"].(map[string]any)["anything"])

	created.Object["status"] = map[string]any{"replicas": int64(2), "selector": "app=w"}
	_, err = dyn.Resource(widget.GVR()).Namespace("default").UpdateStatus(ctx, created, metav1.UpdateOptions{})
	require.NoError(t, err)
	scale, err := dyn.Resource(widget.GVR()).Namespace("default").Get(ctx, "w", metav1.GetOptions{}, "scale")
	require.NoError(t, err)
	require.Equal(t, "app=w", scale.Object["status"].(map[string]any)["selector"])

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	err = crds.Install(cancelled, env.RESTConfig(), crds.Open{Group: "example.tenantkit.io", Version: "v1", Kind: "Gadget", Plural: "gadgets"}.Definition())
	require.ErrorIs(t, err, context.Canceled)
}
