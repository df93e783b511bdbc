package serverbin

import (
	"path/filepath"
	"strings"
)

// buildReason says why s is being built into bin, for the progress line:
// the local environment runs it, and the cache has either no build of it
// or only a build of other sources (its pinned module, flags or the Go
// version changed since).
func buildReason(bin string, s Server) string {
	old, _ := filepath.Glob(filepath.Join(filepath.Dir(bin), s.Name+"-v*"))
	for _, f := range old {
		if f != bin && !strings.HasSuffix(f, ".tmp") {
			return "the embedded local environment runs it, and its pinned sources or Go version changed since the cached build"
		}
	}
	return "the embedded local environment runs it, and this machine has no build of it yet"
}
