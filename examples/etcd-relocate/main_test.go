package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cozystack/tenantkit/cli"
)

func TestUsage(t *testing.T) {
	o := options{out: &bytes.Buffer{}, timeout: cli.Timeout(time.Minute)}
	o.target.Kubeconfig = "/nonexistent"
	err := o.run(context.Background())
	var ee *cli.ExitError
	require.True(t, errors.As(err, &ee))
	require.Equal(t, cli.ExitUsage, ee.Code)
}

// TestEmbedded runs the example end to end on the embedded environment: a
// member of a 3-member tenant etcd moves to the free node under a write
// load, and every acknowledged write reads back.
func TestEmbedded(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the embedded environment (skipped with -short)")
	}
	var out bytes.Buffer
	o := options{out: &out, cluster: "etcd", timeout: cli.Timeout(30 * time.Minute)}
	require.NoError(t, o.run(context.Background()), out.String())
	t.Log(out.String())
	for _, want := range []string{"Relocate etcd-", "Relocated in", "HashKV equal on every voter", "all read back"} {
		require.True(t, strings.Contains(out.String(), want), "output lacks %q", want)
	}
}

// TestEmbeddedEvacuate runs `etcd-relocate evacuate` on the embedded demo
// fleet (two tenant etcds with a member on node-a): both move off node-a
// and the report afterwards finds none there.
func TestEmbeddedEvacuate(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the embedded environment (skipped with -short)")
	}
	var out bytes.Buffer
	cmd := newCommand(&options{out: &out})
	cmd.SetArgs([]string{"evacuate", "--node", "node-a", "--max-parallel", "2", "--timeout", "20m"})
	require.Equal(t, cli.ExitOK, cli.Execute(context.Background(), cmd), out.String())
	t.Log(out.String())
	for _, want := range []string{"Evacuate node-a: 2 moves, 0 refused; at most 2 at once", "evacuation of node-a: 2 moved, 0 failed, 0 refused, 0 not run"} {
		require.Contains(t, out.String(), want)
	}
}

// TestWithTarget: a printed resume or restore command carries the flags
// that reach the same cluster, so that pasting it works.
func TestWithTarget(t *testing.T) {
	remote := &cli.Target{Kubeconfig: "/home/op/my mgmt.kubeconfig", Context: "prod"}
	for _, tt := range []struct {
		name, in string
		target   *cli.Target
		direct   bool
		want     string
	}{
		{"resume", "etcd-relocate --namespace t --cluster etcd --member etcd-1 --to-node n", remote, true,
			"etcd-relocate --kubeconfig '/home/op/my mgmt.kubeconfig' --context prod --direct --namespace t --cluster etcd --member etcd-1 --to-node n"},
		{"restore placeholder", "Relocator.RestoreReplica(...), or: etcd-relocate --kubeconfig KUBECONFIG --namespace t --cluster etcd --restore-to-node NODE",
			&cli.Target{Kubeconfig: "mgmt.kubeconfig"}, false,
			"Relocator.RestoreReplica(...), or: etcd-relocate --kubeconfig mgmt.kubeconfig --namespace t --cluster etcd --restore-to-node NODE"},
		{"embedded", "etcd-relocate --namespace t", &cli.Target{}, false, "etcd-relocate --namespace t"},
		{"no command", "", remote, false, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, withTarget(tt.in, tt.target, tt.direct))
		})
	}
}
