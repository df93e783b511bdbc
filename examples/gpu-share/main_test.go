package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/cozystack/tenantkit/gpushare"
	"github.com/cozystack/tenantkit/gpushare/gpusharetest"
	"github.com/cozystack/tenantkit/localenv"
)

func testOptions(out io.Writer) *options {
	o := &options{out: out, progress: io.Discard, gpus: 1, gpumem: 8000, gpucores: 20, nodePolicy: "binpack", gpuPolicy: "spread"}
	o.target.Out = io.Discard
	return o
}

// TestTour runs the embedded tour end to end.
func TestTour(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an embedded local environment")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var out bytes.Buffer
	require.NoError(t, run(ctx, testOptions(&out)))
	got := spaces.ReplaceAllString(out.String(), " ")
	for _, want := range []string{
		"web/transcode  1 × (whole card, 100% cores) on L40S     gpu-l40s  GPU-l40s-0,NVIDIA,46068,100:;",
		"gpu-a100  GPU-a100-1  NVIDIA A100-SXM4-80GB  80000/81920 MiB  90/100   3/10   ml/batch, ml/finetune, ml/train",
		"Blocked: no node has 2 GPUs with 60000 MiB free (most: 0) [NoMemory]",
		"gpu-a100  GPU-a100-1  CardInsufficientMemory  1920 MiB free < 60000 requested",
		"9 more fit. Free memory now: 104348 MiB; left over after them: 32348 MiB (31%)",
	} {
		require.Contains(t, got, spaces.ReplaceAllString(want, " "))
	}
}

// TestKubeconfigMode reads a cluster the example did not set up, through
// --kubeconfig, and changes nothing in it.
func TestKubeconfigMode(t *testing.T) {
	kubeconfigMode(t, localenv.StartT(t, localenv.Config{EtcdMembers: 1}))
}

// TestKubeconfigMode_kind runs the same against a kind cluster (one node,
// tenantkit's offline node image), as a user would run the example
// against theirs: the GPU nodes are Node objects HAMi's device plugin
// would have annotated, beside the kind node, which is no GPU node. Opt-in
// with TENANTKIT_KIND=1 (make test-kind).
func TestKubeconfigMode_kind(t *testing.T) {
	if os.Getenv("TENANTKIT_KIND") == "" {
		t.Skip("set TENANTKIT_KIND=1 to run the example against a kind cluster")
	}
	kubeconfigMode(t, localenv.StartT(t, localenv.Config{Provider: localenv.Kind}))
}

func kubeconfigMode(t *testing.T, env *localenv.Env) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs, err := kubernetes.NewForConfig(env.RESTConfig())
	require.NoError(t, err)
	nodes, pods := gpusharetest.ClusterT(t, gpusharetest.ClusterConfig{Nodes: 3, GPUsPerNode: 2, Pods: 12, Namespaces: 1, Seed: 9})
	for i := range nodes {
		_, err := cs.CoreV1().Nodes().Create(ctx, &nodes[i], metav1.CreateOptions{})
		require.NoError(t, err)
	}
	_, err = cs.CoreV1().Namespaces().Create(ctx, &corev1Namespace, metav1.CreateOptions{})
	require.NoError(t, err)
	for i := range pods {
		_, err := cs.CoreV1().Pods(pods[i].Namespace).Create(ctx, &pods[i], metav1.CreateOptions{})
		require.NoError(t, err)
	}
	// One node the device plugin wrote garbage on.
	bad := gpusharetest.NodeT(t, "broken")
	bad.Annotations[gpushare.AnnotationRegister] = "GPU-x,10:"
	_, err = cs.CoreV1().Nodes().Create(ctx, bad, metav1.CreateOptions{})
	require.NoError(t, err)

	var out bytes.Buffer
	o := testOptions(&out)
	o.target.Kubeconfig = env.KubeconfigPath()
	require.NoError(t, run(ctx, o))
	require.Contains(t, out.String(), "Ledger: 3 GPU nodes, 6 GPUs, 12 pods")
	require.Contains(t, out.String(), "node/broken: node broken: hami.io/node-nvidia-register")
	require.Contains(t, out.String(), "more fit.")
	list, err := cs.CoreV1().Pods(corev1Namespace.Name).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, list.Items, 12, "read only")

	o.nodePolicy = "fill"
	require.ErrorContains(t, run(ctx, o), "--node-policy")
}

var spaces = regexp.MustCompile(` +`)

var corev1Namespace = func() corev1.Namespace {
	var ns corev1.Namespace
	ns.Name = "team-00"
	return ns
}()
