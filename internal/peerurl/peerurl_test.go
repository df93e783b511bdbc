package peerurl

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSame(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"https://etcd-0.etcd-headless.ns.svc:2380", "https://etcd-0.etcd-headless.ns.svc.cluster.local:2380", true},
		{"https://ETCD-0.example.:2380", "https://etcd-0.example:2380", true},
		{"https://10.0.0.1", "https://10.0.0.1:443", true},
		{"http://10.0.0.1", "http://10.0.0.1:80/", true},
		{"https://10.0.0.1:2380", "http://10.0.0.1:2380", false},
		{"https://10.0.0.1:2380", "https://10.0.0.2:2380", false},
		{"https://[::1]:2380", "https://[::1]:2380", true},
		{"not a url", " NOT A URL ", true},
	} {
		require.Equal(t, tc.same, Same(tc.a, tc.b), "%q vs %q", tc.a, tc.b)
	}
}
