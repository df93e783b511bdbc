package serverbin_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cozystack/tenantkit/internal/serverbin"
)

// TestSeaweedFS_optIn: weed is built only on demand (make test-seaweedfs),
// never by make tools, and the commit it reports is the one its nested
// module pins.
func TestSeaweedFS_optIn(t *testing.T) {
	for _, s := range serverbin.All() {
		require.NotEqual(t, serverbin.SeaweedFS.Name, s.Name, "All() must not hold the opt-in SeaweedFS")
	}
	require.Contains(t, serverbin.Optional(), serverbin.SeaweedFS)

	gomod, err := os.ReadFile(filepath.Join("..", "servers", serverbin.SeaweedFS.Module, "go.mod"))
	require.NoError(t, err)
	var pinned string
	for _, line := range strings.Split(string(gomod), "\n") {
		f := strings.Fields(strings.TrimPrefix(line, "require "))
		if len(f) >= 2 && f[0] == serverbin.SeaweedFS.Upstream {
			pinned = f[1]
		}
	}
	require.NotEmpty(t, pinned, "go.mod does not require %s", serverbin.SeaweedFS.Upstream)
	commit := pinned[strings.LastIndex(pinned, "-")+1:]
	require.Contains(t, serverbin.SeaweedFS.LDFlags, "-X github.com/seaweedfs/seaweedfs/weed/util/version.COMMIT="+commit)
}
