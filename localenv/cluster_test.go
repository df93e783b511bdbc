package localenv_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/cozystack/tenantkit/localenv"
	"github.com/cozystack/tenantkit/localenv/internal/nodeagent"
)

func TestCluster_nodesPodsAndVolumes(t *testing.T) {
	env := localenv.StartT(t, localenv.Config{Cluster: &localenv.ClusterConfig{
		Nodes: []localenv.NodeConfig{{Name: "node-a"}, {Name: "node-b", GPU: true}},
	}})
	ctx := t.Context()
	cs := kubernetes.NewForConfigOrDie(env.RESTConfig())
	cluster := env.Cluster()
	require.Equal(t, []string{"node-a", "node-b"}, cluster.Nodes())

	t.Run("nodes are registered and ready", func(t *testing.T) {
		for _, name := range cluster.Nodes() {
			n, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			require.NoError(t, err)
			require.Equal(t, name, n.Labels[corev1.LabelHostname])
			require.True(t, nodeReady(n), "node %s not ready", name)
		}
		b, err := cs.CoreV1().Nodes().Get(ctx, "node-b", metav1.GetOptions{})
		require.NoError(t, err)
		require.Equal(t, "on", b.Labels["gpu"])
	})

	ns := createNamespace(t, cs, "smoke")
	t.Run("pod of another image is simulated", func(t *testing.T) {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
			Spec: corev1.PodSpec{
				NodeSelector: map[string]string{"gpu": "on"},
				Containers:   []corev1.Container{{Name: "web", Image: "nginx:1.27"}},
			},
		}
		_, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
		require.NoError(t, err)
		got := waitPod(t, cs, ns, "web", podReady)
		require.Equal(t, "node-b", got.Spec.NodeName)
		require.Equal(t, corev1.PodRunning, got.Status.Phase)
		require.True(t, cluster.NodeAddr("node-b").IsLoopback())
		var simulated *corev1.PodCondition
		for i, c := range got.Status.Conditions {
			if c.Type == nodeagent.ConditionSimulated {
				simulated = &got.Status.Conditions[i]
			}
		}
		require.NotNil(t, simulated, "no Simulated condition")
		require.Contains(t, simulated.Message, "nginx:1.27")
	})

	t.Run("claim binds a local volume on the pod's node", func(t *testing.T) {
		pvc := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: ns},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
			},
		}
		_, err := cs.CoreV1().PersistentVolumeClaims(ns).Create(ctx, pvc, metav1.CreateOptions{})
		require.NoError(t, err)
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "user", Namespace: ns},
			Spec: corev1.PodSpec{
				NodeSelector: map[string]string{corev1.LabelHostname: "node-a"},
				Containers:   []corev1.Container{{Name: "app", Image: "busybox"}},
				Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
					PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}},
			},
		}
		_, err = cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
		require.NoError(t, err)
		waitPod(t, cs, ns, "user", podReady)
		got, err := cs.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "data", metav1.GetOptions{})
		require.NoError(t, err)
		require.Equal(t, corev1.ClaimBound, got.Status.Phase)
		pv, err := cs.CoreV1().PersistentVolumes().Get(ctx, got.Spec.VolumeName, metav1.GetOptions{})
		require.NoError(t, err)
		require.Equal(t, "node-a", pv.Labels["localenv.tenantkit.io/node"])
	})
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func createNamespace(t *testing.T, cs kubernetes.Interface, name string) string {
	t.Helper()
	_, err := cs.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	require.NoError(t, err)
	// With ServiceAccount admission on, pods need the namespace's default
	// service account, which the controller manager creates.
	require.Eventually(t, func() bool {
		_, err := cs.CoreV1().ServiceAccounts(name).Get(t.Context(), "default", metav1.GetOptions{})
		return err == nil
	}, 30*time.Second, 100*time.Millisecond)
	return name
}

func waitPod(t *testing.T, cs kubernetes.Interface, ns, name string, cond func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	var last *corev1.Pod
	for ctx.Err() == nil {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			last = p
			if cond(p) {
				return p
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("pod %s/%s: condition not met in time; last status: %+v", ns, name, last)
	return nil
}
