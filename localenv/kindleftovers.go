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
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/kind/pkg/cluster"
	kindlog "sigs.k8s.io/kind/pkg/log"

	"github.com/cozystack/tenantkit/internal/process"
)

// kindClusterPrefix starts the name of every kind cluster tenantkit
// creates: tenantkit-<owner pid>-<owner start time>-<random>, so that a
// later Start can tell a dead owner's cluster from a live one's.
const kindClusterPrefix = "tenantkit-"

// kindClusterName names a new cluster owned by this process.
func kindClusterName() (string, error) {
	start, err := procStart(os.Getpid())
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
	got, err := procStart(pid)
	return err == nil && got == start, true
}

func procStart(pid int) (uint64, error) {
	f, err := process.StatFields(pid)
	if err != nil {
		return 0, err
	}
	if len(f) < 20 {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	return strconv.ParseUint(f[19], 10, 64)
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

// waitNodesReady waits until n nodes are Ready.
func waitNodesReady(ctx context.Context, rc *rest.Config, n int, timeout time.Duration) error {
	if timeout == 0 {
		timeout = 5 * time.Minute
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return fmt.Errorf("localenv: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	last := "no answer"
	for {
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err == nil {
			ready := 0
			for _, nd := range nodes.Items {
				for _, c := range nd.Status.Conditions {
					if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
						ready++
					}
				}
			}
			if ready == n && len(nodes.Items) == n {
				return nil
			}
			last = fmt.Sprintf("%d of %d nodes Ready", ready, n)
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("localenv: kind nodes not Ready after %s: %s", timeout, last)
		case <-time.After(2 * time.Second):
		}
	}
}

// kindLogger passes kind's messages to the environment's logger.
type kindLogger struct{ l *slog.Logger }

func (k kindLogger) Warn(m string)             { k.l.Warn("kind: " + m) }
func (k kindLogger) Warnf(f string, a ...any)  { k.l.Warn("kind: " + fmt.Sprintf(f, a...)) }
func (k kindLogger) Error(m string)            { k.l.Error("kind: " + m) }
func (k kindLogger) Errorf(f string, a ...any) { k.l.Error("kind: " + fmt.Sprintf(f, a...)) }
func (k kindLogger) V(v kindlog.Level) kindlog.InfoLogger {
	return kindInfo{l: k.l, on: v <= 0}
}

// kindInfo logs kind's status lines (level 0) at Info and its debug output
// (kubeadm's, level 1 and up) at Debug.
type kindInfo struct {
	l  *slog.Logger
	on bool
}

func (k kindInfo) Info(m string) {
	if k.on {
		k.l.Info("kind: " + strings.TrimSpace(m))
	} else {
		k.l.Debug("kind: " + m)
	}
}
func (k kindInfo) Infof(f string, a ...any) { k.Info(fmt.Sprintf(f, a...)) }
func (k kindInfo) Enabled() bool            { return true }
