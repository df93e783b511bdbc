package tenant_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/cozystack/tenantkit/tenant"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// golden compares got with testdata/<name>.golden, or rewrites the file
// under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "golden file missing; run go test -run %s -update", t.Name())
	require.Equal(t, string(want), string(got), "golden file %s differs; run with -update if the change is intended", path)
}

// requireSemanticEqual compares with apimachinery's semantic equality
// (quantities by value), showing require.Equal's diff on failure.
func requireSemanticEqual(t *testing.T, want, got any) {
	t.Helper()
	if equality.Semantic.DeepEqual(want, got) {
		return
	}
	require.Equal(t, want, got)
}

// checkErr keeps the error of Check: checkErr(spec.Check(p)).
func checkErr(_ tenant.Warnings, err error) error { return err }
