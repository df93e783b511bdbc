package nodeagent

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestExpand(t *testing.T) {
	vars := map[string]string{"POD_NAME": "etcd-1", "POD_NAMESPACE": "tenant-demo", "EMPTY": ""}
	lookup := func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
	tests := []struct{ in, want string }{
		{"--name=$(POD_NAME)", "--name=etcd-1"},
		{"https://$(POD_NAME).etcd-headless.$(POD_NAMESPACE).svc:2380", "https://etcd-1.etcd-headless.tenant-demo.svc:2380"},
		{"$(UNDEFINED) stays", "$(UNDEFINED) stays"},
		{"$$(POD_NAME) is escaped", "$(POD_NAME) is escaped"},
		{"$$", "$"},
		{"a $ b", "a $ b"},
		{"trailing $", "trailing $"},
		{"$(unclosed", "$(unclosed"},
		{"$(EMPTY)x", "x"},
		{"$()", "$()"},
		{"no refs", "no refs"},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, Expand(tt.in, lookup), "Expand(%q)", tt.in)
	}
}

// FuzzExpand checks Expand never panics, leaves strings without $ alone and
// never grows a string when no variable is defined.
func FuzzExpand(f *testing.F) {
	for _, s := range []string{"--name=$(POD_NAME)", "$$(X)", "$(", "$", "a$(b)c$$d", ""} {
		f.Add(s)
	}
	none := func(string) (string, bool) { return "", false }
	f.Fuzz(func(t *testing.T, s string) {
		got := Expand(s, none)
		if !strings.Contains(s, "$") && got != s {
			t.Fatalf("Expand(%q) = %q, want unchanged", s, got)
		}
		if len(got) > len(s) {
			t.Fatalf("Expand(%q) = %q grew without variables", s, got)
		}
	})
}
