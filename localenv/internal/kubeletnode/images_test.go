package kubeletnode

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestEtcdImage(t *testing.T) {
	for img, want := range map[string]bool{
		"quay.io/coreos/etcd:v3.6.11":    true,
		"registry.k8s.io/etcd:3.5.15-0":  true,
		"etcd":                           true,
		"localhost:5000/etcd":            true,
		"quay.io/coreos/etcd@sha256:abc": false,
		"ghcr.io/ahrtr/etcd-defrag:v0.1": false,
		"nginx:1.27":                     false,
	} {
		require.Equal(t, want, etcdImage(img), img)
	}
}
