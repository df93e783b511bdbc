package etcdrelocate_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/cozystack/tenantkit/etcdrelocate"
)

// TestMisuse: nil or zero arguments to the exported functions and methods
// return an error wrapping ErrInvalidArgument instead of panicking.
func TestMisuse(t *testing.T) {
	ctx := context.Background()
	var zero etcdrelocate.Relocator
	var nilRelocator *etcdrelocate.Relocator
	req := etcdrelocate.Request{Namespace: "tenant-a", Member: "etcd-0", TargetNode: "n1"}
	for name, call := range map[string]func() error{
		"PlanFor nil state":   func() error { _, err := etcdrelocate.PlanFor(nil, req); return err },
		"Preflight nil state": func() error { return etcdrelocate.Preflight(nil, req) },
		"RestorePlanFor nil state": func() error {
			_, err := etcdrelocate.RestorePlanFor(nil, etcdrelocate.RestoreRequest{Namespace: "tenant-a"})
			return err
		},
		"Encode nil checkpoint":        func() error { _, err := (*etcdrelocate.Checkpoint)(nil).Encode(); return err },
		"PortForwardDialer nil config": func() error { _, err := etcdrelocate.PortForwardDialer(nil); return err },
		"Observe zero Relocator":       func() error { _, err := zero.Observe(ctx, "tenant-a", ""); return err },
		"Plan zero Relocator":          func() error { _, err := zero.Plan(ctx, req); return err },
		"Plan nil Relocator":           func() error { _, err := nilRelocator.Plan(ctx, req); return err },
		"Execute zero Relocator":       func() error { _, err := zero.Execute(ctx, &etcdrelocate.Plan{}); return err },
		"Verify nil Relocator":         func() error { _, err := nilRelocator.Verify(ctx, &etcdrelocate.Plan{}); return err },
		"PlanRestore zero Relocator": func() error {
			_, err := zero.PlanRestore(ctx, etcdrelocate.RestoreRequest{Namespace: "tenant-a"})
			return err
		},
		"RestoreReplica zero Relocator": func() error {
			_, err := zero.RestoreReplica(ctx, etcdrelocate.RestoreRequest{Namespace: "tenant-a"})
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			var err error
			require.NotPanics(t, func() { err = call() })
			require.ErrorIs(t, err, etcdrelocate.ErrInvalidArgument)
		})
	}
}

// TestMisuseNilPlan: Execute and Verify of a usable Relocator refuse a nil
// plan; the nil plan's, result's and checkpoint's accessors answer nil.
func TestMisuseNilPlan(t *testing.T) {
	r, err := etcdrelocate.New(etcdrelocate.Config{Kube: fake.NewClientset()})
	require.NoError(t, err)
	res, err := r.Execute(context.Background(), nil)
	require.ErrorIs(t, err, etcdrelocate.ErrInvalidArgument)
	require.NotNil(t, res, "Execute always returns a Result")
	_, err = r.Verify(context.Background(), nil)
	require.ErrorIs(t, err, etcdrelocate.ErrInvalidArgument)

	var p *etcdrelocate.Plan
	require.Nil(t, p.Step(etcdrelocate.StepSnapshot))
	require.Equal(t, "<nil plan>", p.String())
	require.Nil(t, (*etcdrelocate.Result)(nil).Step(etcdrelocate.StepSnapshot))
	require.Nil(t, etcdrelocate.CheckpointFor(nil))
}
