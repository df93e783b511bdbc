package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/cozystack/tenantkit/internal/serverbin"
	"github.com/cozystack/tenantkit/ref"
)

// kubectlEnv names the kubectl binary the kubectl subtest runs (the
// variable serverbin's override reads for a server named kubectl); without
// it the subtest runs the kubectl v1.37.2 `make tools` built from the
// pinned k8s.io/kubernetes.
const kubectlEnv = "TENANTKIT_KUBECTL_BIN"

// kubectl runs a real kubectl with the plugin: 16 `kubectl auth whoami`
// started at once cause one sign-in, and A's token is refused by B.
func (w *world) kubectl(t *testing.T) {
	bin := os.Getenv(kubectlEnv)
	if bin == "" {
		// make tools builds it; go test never does (its timeout would
		// run into the build).
		var err error
		bin, err = (&serverbin.Builder{NoBuild: true, Progress: io.Discard}).Path(w.ctx, serverbin.Kubectl)
		if err != nil {
			t.Skipf("no kubectl: run make tools, or set %s to a kubectl v1.37.2 (the client-go exec authenticator subtests cover the protocol): %v", kubectlEnv, err)
		}
	}
	cache := t.TempDir()
	write := func(name string, c, server ref.Cluster) string {
		path := filepath.Join(t.TempDir(), name)
		require.NoError(t, clientcmd.WriteToFile(*w.kubeconfig(c, server, cache), path))
		return path
	}
	a, aOnB := write("a", clusterA, clusterA), write("a-on-b", clusterA, clusterB)
	before, runs := w.signIns(), w.runs()
	var wg sync.WaitGroup
	outs := make([]string, 16)
	errs := make([]error, 16)
	for i := range 16 {
		wg.Go(func() {
			var stdout, stderr bytes.Buffer
			cmd := exec.CommandContext(w.ctx, bin, "--kubeconfig", a, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}")
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			errs[i] = cmd.Run()
			outs[i] = stdout.String() + "\nstderr: " + stderr.String()
		})
	}
	wg.Wait()
	for i := range 16 {
		require.NoError(t, errs[i], outs[i])
		require.True(t, strings.HasPrefix(outs[i], aliceEmail+"\n"), "kubectl %d: %s", i, outs[i])
	}
	require.Equal(t, 16, w.runs()-runs, "16 plugin processes")
	t.Logf("16 parallel kubectl auth whoami: %d sign-in(s)", w.signIns()-before)
	require.Equal(t, 1, w.signIns()-before)

	var stderr bytes.Buffer
	cmd := exec.CommandContext(w.ctx, bin, "--kubeconfig", aOnB, "auth", "whoami")
	cmd.Stderr = &stderr
	require.Error(t, cmd.Run())
	require.Contains(t, stderr.String(), "Unauthorized", "B refuses A's token through kubectl")
	require.Equal(t, 1, w.signIns()-before)
}
