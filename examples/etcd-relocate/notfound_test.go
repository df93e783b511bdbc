package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/cozystack/tenantkit/cli"
	"github.com/cozystack/tenantkit/internal/exitcodetest"
	"github.com/cozystack/tenantkit/localenv"
)

// TestNotFound: names that a real cluster does not have (a node, a
// namespace without a tenant etcd) end with exit 1 naming what was looked
// for and where, and nothing is created: no report that losing a node
// that does not exist is harmless.
func TestNotFound(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and kube-apiserver (skipped with -short)")
	}
	env := localenv.StartT(t, localenv.Config{})
	kube, err := kubernetes.NewForConfig(env.RESTConfig())
	require.NoError(t, err)
	ctx := context.Background()
	_, err = kube.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker-1"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	before := objects(t, kube)

	k := env.KubeconfigPath()
	where := "the cluster of " + k
	exitcodetest.Run(t, cli.Execute, func(stdout *bytes.Buffer) *cobra.Command { return newCommand(&options{out: stdout}) }, []exitcodetest.Case{
		{Name: "node: no such node", Args: []string{"node", "worker-9", "--kubeconfig", k}, Code: cli.ExitFailure, First: `etcd-relocate: node "worker-9" not found in ` + where},
		{Name: "evacuate: no such node", Args: []string{"evacuate", "--node", "worker-9", "--kubeconfig", k}, Code: cli.ExitFailure, First: `etcd-relocate: node "worker-9" not found in ` + where},
		{Name: "evacuate --dry-run: no such node", Args: []string{"evacuate", "--node", "worker-9", "--dry-run", "--kubeconfig", k}, Code: cli.ExitFailure, First: `etcd-relocate: node "worker-9" not found in ` + where},
		{Name: "no tenant etcd in the namespace", Args: []string{"--kubeconfig", k, "--direct", "--namespace", "tenant-none", "--member", "etcd-0", "--to-node", "worker-1"},
			Code: cli.ExitFailure, First: `etcd-relocate: tenant etcd "etcd" not found in namespace tenant-none`, Stdout: "Refused:"},
		{Name: "node: an existing node with no tenant etcd", Args: []string{"node", "worker-1", "--kubeconfig", k}, Code: cli.ExitOK, First: "", Stdout: "worker-1"},
	})
	require.Equal(t, before, objects(t, kube), "objects created")
	n, err := kube.CoreV1().Nodes().Get(ctx, "worker-1", metav1.GetOptions{})
	require.NoError(t, err)
	require.False(t, n.Spec.Unschedulable, "worker-1 cordoned")
}

// objects names every ConfigMap, Lease and namespace of the cluster.
func objects(t *testing.T, kube kubernetes.Interface) []string {
	t.Helper()
	ctx := context.Background()
	var names []string
	cms, err := kube.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	for _, o := range cms.Items {
		names = append(names, "configmap "+o.Namespace+"/"+o.Name)
	}
	leases, err := kube.CoordinationV1().Leases("").List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	for _, o := range leases.Items {
		names = append(names, "lease "+o.Namespace+"/"+o.Name)
	}
	nss, err := kube.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	for _, o := range nss.Items {
		names = append(names, "namespace "+o.Name)
	}
	return names
}
