package cozystack_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/cozystack/tenantkit/localenv"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/equality"
)

// One local control plane (etcd + kube-apiserver) serves every
// integration test of the package; tests use distinct tenants.
var shared struct {
	once sync.Once
	env  *localenv.Env
	err  error
}

// testEnv starts the shared environment on first use. It skips under
// -short.
func testEnv(t *testing.T) *localenv.Env {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: starts real servers (skipped with -short)")
	}
	shared.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
		defer cancel()
		shared.env, shared.err = localenv.Start(ctx, localenv.Config{})
	})
	if shared.err != nil {
		t.Fatalf("start local environment: %v", shared.err)
	}
	return shared.env
}

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if shared.env != nil {
		if err := shared.env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stop local environment:", err)
		}
	}
	os.Exit(code)
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
