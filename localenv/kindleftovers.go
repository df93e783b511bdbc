package localenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"sigs.k8s.io/kind/pkg/cluster"

	"github.com/cozystack/tenantkit/internal/process"
)

// kindClusterPrefix starts the name of every kind cluster tenantkit
// creates: tenantkit-<owner pid>-<owner start time>-<random>, so that a
// later Start can tell a dead owner's cluster from a live one's.
const kindClusterPrefix = "tenantkit-"

// kindClusterName names a new cluster owned by this process.
func kindClusterName() (string, error) {
	start, err := process.StartTime(os.Getpid())
	if err != nil {
		return "", fmt.Errorf("localenv: %w", err)
	}
	var r [2]byte
	_, _ = rand.Read(r[:])
	return fmt.Sprintf("%s%d-%d-%s", kindClusterPrefix, os.Getpid(), start, hex.EncodeToString(r[:])), nil
}

// kindOwnerAlive reports whether the process that named the cluster still
// runs; ok is false for names tenantkit did not make.
func kindOwnerAlive(name string) (alive, ok bool) {
	f := strings.Split(strings.TrimPrefix(name, kindClusterPrefix), "-")
	if !strings.HasPrefix(name, kindClusterPrefix) || len(f) != 3 {
		return false, false
	}
	pid, err1 := strconv.Atoi(f[0])
	start, err2 := strconv.ParseUint(f[1], 10, 64)
	if err1 != nil || err2 != nil || pid <= 0 {
		return false, false
	}
	got, err := process.StartTime(pid)
	return err == nil && got == start, true
}

// cleanKindLeftovers deletes the clusters and networks of tenantkit
// environments whose process died without stopping (killed, crashed).
func cleanKindLeftovers(ctx context.Context, provider *cluster.Provider, log *slog.Logger) error {
	names, err := provider.List()
	if err != nil {
		return err
	}
	out, err := exec.CommandContext(ctx, "docker", "network", "ls", "--filter", "name="+kindNetworkPrefix+kindClusterPrefix, "--format", "{{.Name}}").Output()
	if err != nil {
		return err
	}
	for _, n := range strings.Fields(string(out)) {
		names = append(names, strings.TrimPrefix(n, kindNetworkPrefix))
	}
	seen := map[string]bool{}
	var errs []error
	for _, name := range names {
		alive, ok := kindOwnerAlive(name)
		if !ok || alive || seen[name] {
			continue
		}
		seen[name] = true
		log.Info("deleting a dead environment's kind cluster", "name", name)
		if err := deleteKindCluster(provider, name, filepath.Join(os.TempDir(), "tenantkit-kind-leftover.kubeconfig")); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
