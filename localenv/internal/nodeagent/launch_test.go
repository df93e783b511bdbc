package nodeagent

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

func TestLaunch_rewrite(t *testing.T) {
	l := &launch{rootfs: "/env/pods/p/rootfs", mounts: []mount{
		{containerPath: "/etc/etcd/pki/server/cert", hostPath: "/env/pods/p/volumes/server-certificate"},
		{containerPath: "/var/run/etcd", hostPath: "/env/nodes/a/volumes/a-vol-0"},
	}}
	ip := netip.MustParseAddr("127.40.1.2")
	tests := []struct{ in, want string }{
		{"--data-dir=/var/run/etcd/default.etcd", "--data-dir=/env/nodes/a/volumes/a-vol-0/default.etcd"},
		{"--cert-file=/etc/etcd/pki/server/cert/tls.crt", "--cert-file=/env/pods/p/volumes/server-certificate/tls.crt"},
		{"/var/run/etcd", "/env/nodes/a/volumes/a-vol-0"},
		{"/var/run/etcdx/file", "/env/pods/p/rootfs/var/run/etcdx/file"},
		{"--wal-dir=/wal", "--wal-dir=/env/pods/p/rootfs/wal"},
		{"--data-dir=/var/run/etcd/../../../etc", "--data-dir=/env/pods/p/rootfs/etc"},
		{"--listen-client-urls=https://0.0.0.0:2379", "--listen-client-urls=https://127.40.1.2:2379"},
		{"--listen-metrics-urls=http://localhost:2381,http://[::]:2382", "--listen-metrics-urls=http://127.40.1.2:2381,http://127.40.1.2:2382"},
		{"--advertise-client-urls=https://etcd-0.etcd-headless.ns.svc:2379", "--advertise-client-urls=https://etcd-0.etcd-headless.ns.svc:2379"},
		{"etcd-0=https://etcd-0.etcd-headless.ns.svc:2380,etcd-1=https://etcd-1.etcd-headless.ns.svc:2380", "etcd-0=https://etcd-0.etcd-headless.ns.svc:2380,etcd-1=https://etcd-1.etcd-headless.ns.svc:2380"},
		{"--peer-client-cert-auth", "--peer-client-cert-auth"},
		{"--name=etcd-0", "--name=etcd-0"},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, l.rewriteArg(tt.in, ip), "rewriteArg(%q)", tt.in)
	}
}

func TestIsEtcd(t *testing.T) {
	for image, want := range map[string]bool{
		"quay.io/coreos/etcd:v3.5.12":            true,
		"registry.k8s.io/etcd:3.5.15-0":          true,
		"gcr.io/etcd-development/etcd@sha256:ab": true,
		"etcd":                                   true,
		"localhost:5000/etcd":                    true,
		"ghcr.io/ahrtr/etcd-defrag:v0.13.0":      false,
		"nginx:1.27":                             false,
		"quay.io/etcd/operator:v1":               false,
	} {
		require.Equal(t, want, isEtcd(corev1.Container{Image: image}), image)
	}
}
