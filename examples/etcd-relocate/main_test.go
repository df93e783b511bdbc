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
