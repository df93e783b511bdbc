package ref_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cozystack/tenantkit/ref"
)

func TestChildNamespace(t *testing.T) {
	for _, tt := range []struct {
		parent, name, want string
		wantErr            error
	}{
		{"tenant-root", "acme", "tenant-acme", nil},
		{"tenant-acme", "dev", "tenant-acme-dev", nil},
		{"tenant-acme-dev", "team1", "tenant-acme-dev-team1", nil},
		{"tenant-root", "my-org", "", ref.ErrInvalidName},
		{"tenant-root", "Acme", "", ref.ErrInvalidName},
		{"tenant-root", "", "", ref.ErrInvalidName},
		{"default", "acme", "", ref.ErrInvalidName},
		{"tenant-", "acme", "", ref.ErrInvalidName},
		{"tenant-" + repeat("a", 50), repeat("b", 10), "", ref.ErrInvalidName},
	} {
		got, err := ref.ChildNamespace(tt.parent, tt.name)
		if tt.wantErr != nil {
			require.ErrorIs(t, err, tt.wantErr, "%s + %s", tt.parent, tt.name)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, tt.want, got)
	}
}

func TestParseNamespace(t *testing.T) {
	for ns, want := range map[string][]string{
		"tenant-root":     {"root"},
		"tenant-acme":     {"root", "acme"},
		"tenant-acme-dev": {"root", "acme", "dev"},
	} {
		got, err := ref.ParseNamespace(ns)
		require.NoError(t, err)
		require.Equal(t, want, got)
	}
	for _, bad := range []string{"", "tenant", "tenant-", "kube-system", "tenant-acme--dev", "tenant-Acme", "tenant-root-x", "tenant-acme-"} {
		_, err := ref.ParseNamespace(bad)
		require.ErrorIs(t, err, ref.ErrInvalidName, bad)
	}
}

func TestParentNamespace(t *testing.T) {
	_, ok, err := ref.ParentNamespace("tenant-root")
	require.NoError(t, err)
	require.False(t, ok)
	p, ok, err := ref.ParentNamespace("tenant-acme")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "tenant-root", p)
	p, _, err = ref.ParentNamespace("tenant-acme-dev")
	require.NoError(t, err)
	require.Equal(t, "tenant-acme", p)
	_, _, err = ref.ParentNamespace("default")
	require.ErrorIs(t, err, ref.ErrInvalidName)

	a, err := ref.Ancestors("tenant-acme-dev")
	require.NoError(t, err)
	require.Equal(t, []string{"tenant-root", "tenant-acme", "tenant-acme-dev"}, a)
}

func repeat(s string, n int) string {
	out := ""
	for range n {
		out += s
	}
	return out
}
