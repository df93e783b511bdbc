package credential

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseExecInfo(t *testing.T) {
	ec, err := parseExecInfo([]byte(`{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",
		"spec":{"interactive":true,"cluster":{"server":"https://x","config":{"audience":"a"}}}}`))
	require.NoError(t, err)
	require.True(t, ec.Spec.Interactive)
	require.Equal(t, "https://x", ec.Spec.Cluster.Server)
	for _, bad := range []string{``, `{`, `{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential"}`,
		`{"apiVersion":"client.authentication.k8s.io/v1","kind":"Pod"}`} {
		_, err := parseExecInfo([]byte(bad))
		require.ErrorIs(t, err, ErrInvalidConfig, bad)
	}
}

// FuzzParseExecInfo: whatever kubectl (or anyone setting the variable)
// passes, parseExecInfo returns a v1 ExecCredential or ErrInvalidConfig.
func FuzzParseExecInfo(f *testing.F) {
	f.Add([]byte(`{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","spec":{"interactive":false}}`))
	f.Add([]byte(`{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","spec":{"cluster":{"config":{"a":[1,{}]}}}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		ec, err := parseExecInfo(raw)
		if err != nil {
			require.ErrorIs(t, err, ErrInvalidConfig)
			return
		}
		require.Equal(t, execAPIVersion, ec.APIVersion)
	})
}
