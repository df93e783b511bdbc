package localvolume_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/cozystack/tenantkit/localenv/internal/localvolume"
)

// Every node gets local volumes with node affinity; the local environment
// passes the real apiserver's client instead of a fake.
func Example() {
	ctx := context.Background()
	root, _ := os.MkdirTemp("", "volumes")
	defer os.RemoveAll(root)
	cs := fake.NewClientset()
	m, err := localvolume.Start(ctx, localvolume.Config{
		Client: cs, Nodes: []string{"node-a"}, PerNode: 2,
		Dir: func(node string) string { return filepath.Join(root, node) },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer m.Stop()
	pvs, _ := cs.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	for _, pv := range pvs.Items {
		fmt.Println(pv.Name, pv.Spec.StorageClassName, pv.Spec.Capacity.Storage(), pv.Labels[localvolume.LabelNode])
	}
	// Output:
	// node-a-vol-0 local 10Gi node-a
	// node-a-vol-1 local 10Gi node-a
}
