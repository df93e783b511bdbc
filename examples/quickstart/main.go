// Command quickstart is the first stop of the tenantkit tour: it starts the
// embedded local environment — a real three-member etcd cluster and a real
// kube-apiserver on loopback — shows what runs, makes a client-go round trip
// through it, and stops everything again.
//
//	go run ./examples/quickstart
//
// The first run builds the servers from their pinned Go modules (several
// minutes for kube-apiserver) and caches them; later runs start in seconds.
// With --kubeconfig it makes the same round trip against a real cluster.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/cozystack/tenantkit/internal/examplecli"
	"github.com/cozystack/tenantkit/internal/localenv"
)

func main() {
	var target examplecli.Target
	cmd := &cobra.Command{
		Use:   "quickstart",
		Short: "Start the embedded control plane, show it, and make a client-go round trip",
		Long: `quickstart starts tenantkit's embedded local environment (etcd x3 and kube-apiserver,
real processes on loopback), prints its components with versions and endpoints, writes and
reads a ConfigMap through client-go, and stops everything.

With --kubeconfig it runs the round trip against that cluster instead.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return run(cmd.Context(), &target) },
	}
	target.AddFlags(cmd.Flags())
	examplecli.Main(cmd)
}

func run(ctx context.Context, target *examplecli.Target) error {
	if err := target.Open(ctx, localenv.Config{}); err != nil {
		return err
	}
	defer target.Close()

	cs, err := kubernetes.NewForConfig(target.RESTConfig)
	if err != nil {
		return examplecli.WithCode(examplecli.ExitUnavailable, err)
	}
	version, err := cs.Discovery().ServerVersion()
	if err != nil {
		return examplecli.WithCode(examplecli.ExitUnavailable, fmt.Errorf("ask the apiserver its version: %w", err))
	}
	fmt.Printf("\nKubernetes %s at %s\n\n", version.GitVersion, target.RESTConfig.Host)
	if env := target.Env; env != nil {
		var rows [][]string
		for _, c := range env.Components() {
			rows = append(rows, []string{c.Name, c.Version, c.Endpoint, fmt.Sprint(c.Process.PID())})
		}
		examplecli.Table(os.Stdout, []string{"COMPONENT", "VERSION", "ENDPOINT", "PID"}, rows)
		fmt.Printf("\nstarted in %s; admin kubeconfig: %s\n\n", env.StartDuration().Round(10*time.Millisecond), env.KubeconfigPath())
	}

	step := examplecli.Step(os.Stderr, "client-go round trip: create a namespace and a ConfigMap, read it back")
	got, err := roundTrip(ctx, cs)
	step.Done(err)
	if err != nil {
		return err
	}
	fmt.Printf("\nread back ConfigMap %s/%s: %v\n\n", got.Namespace, got.Name, got.Data)
	return nil
}

func roundTrip(ctx context.Context, cs kubernetes.Interface) (*corev1.ConfigMap, error) {
	ns, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "tenantkit-quickstart-"},
	}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("create namespace: %w", err)
	}
	defer cs.CoreV1().Namespaces().Delete(context.WithoutCancel(ctx), ns.Name, metav1.DeleteOptions{})
	want := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "hello"},
		Data:       map[string]string{"greeting": "hello from tenantkit"},
	}
	if _, err := cs.CoreV1().ConfigMaps(ns.Name).Create(ctx, want, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("create configmap: %w", err)
	}
	got, err := cs.CoreV1().ConfigMaps(ns.Name).Get(ctx, want.Name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("read configmap: %w", err)
	}
	if got.Data["greeting"] != want.Data["greeting"] {
		return nil, fmt.Errorf("read back %v, wrote %v", got.Data, want.Data)
	}
	return got, nil
}
