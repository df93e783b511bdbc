package serverbin

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSharedModules_sameVersions: every module that the kubelet's nested
// module requires and the control plane's requires too is at the same
// version in both (and so are their replacements), so that the Kubernetes
// packages the kubelet and kube-apiserver share have the same build action
// IDs and compile once on a cold machine, not once per module. Both go.mod
// files are tidy, so they list every module that provides a package.
func TestSharedModules_sameVersions(t *testing.T) {
	files := embeddedFiles()
	tests := []struct{ module, other string }{
		{module: "kubelet", other: "kube"},
		{module: "kubeadm", other: "kube"},
	}
	for _, tt := range tests {
		t.Run(tt.module, func(t *testing.T) {
			mine := goModVersions(t, files[tt.module+"/go.mod"])
			theirs := goModVersions(t, files[tt.other+"/go.mod"])
			shared := 0
			for path, v := range mine {
				if w, ok := theirs[path]; ok {
					shared++
					require.Equal(t, w, v, "%s in %s's go.mod and %s's", path, tt.module, tt.other)
				}
			}
			require.Greater(t, shared, 100, "modules the two go.mod files share")
		})
	}
}

// goModVersions reads a go.mod's require and replace lines: module path →
// version, and "path =>" → the replacement.
func goModVersions(t *testing.T, gomod string) map[string]string {
	t.Helper()
	require.NotEmpty(t, gomod)
	versions := map[string]string{}
	block := ""
	for line := range strings.SplitSeq(gomod, "\n") {
		line, _, _ = strings.Cut(line, "//")
		f := strings.Fields(line)
		kind := block
		switch {
		case len(f) == 0:
			continue
		case f[len(f)-1] == "(":
			block = f[0]
			continue
		case f[0] == ")":
			block = ""
			continue
		case block == "" && (f[0] == "require" || f[0] == "replace"):
			kind, f = f[0], f[1:]
		}
		switch {
		case kind == "require" && len(f) == 2:
			versions[f[0]] = f[1]
		case kind == "replace":
			from, to, ok := strings.Cut(strings.Join(f, " "), " => ")
			require.True(t, ok, "replace line %q", line)
			versions[from+" =>"] = to
		}
	}
	return versions
}
