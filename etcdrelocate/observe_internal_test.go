package etcdrelocate

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestExpectedPeerURL(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "etcd-1", Namespace: "tenant-a"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name: "etcd",
		Env: []corev1.EnvVar{
			{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
			{Name: "POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
		},
		Args: []string{"--name=$(POD_NAME)", "--initial-advertise-peer-urls=https://$(POD_NAME).etcd-headless.$(POD_NAMESPACE).svc:2380"},
	}}}}
	require.Equal(t, "https://etcd-1.etcd-headless.tenant-a.svc:2380", expectedPeerURL(pod, "etcd-headless"))
	// Without the flag, the layout's naming convention.
	pod.Spec.Containers[0].Args = nil
	require.Equal(t, "https://etcd-1.other.tenant-a.svc:2380", expectedPeerURL(pod, "other"))
	require.Equal(t, "a-$(UNSET)-b", expand("a-$(UNSET)-b", nil))
	require.Equal(t, "x-1-$(", expand("x-$(N)-$(", map[string]string{"N": "1"}))
}

func TestPodOfHost(t *testing.T) {
	pod, ns, err := podOfHost("etcd-0.etcd-headless.tenant-a.svc")
	require.NoError(t, err)
	require.Equal(t, []string{"etcd-0", "tenant-a"}, []string{pod, ns})
	_, _, err = podOfHost("10.0.0.1")
	require.Error(t, err)
}

func TestCoversHost(t *testing.T) {
	names := []string{"etcd", "*.etcd-headless.ns.svc", "etcd-0.etcd-headless.ns.svc"}
	require.True(t, coversHost(names, "etcd-7.etcd-headless.ns.svc"))
	require.True(t, coversHost(names, "ETCD-0.etcd-headless.ns.svc."))
	require.False(t, coversHost(names, "a.b.etcd-headless.ns.svc"))
	require.False(t, coversHost(names[2:], "etcd-3.etcd-headless.ns.svc"))
}
