package localenv

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	kindlog "sigs.k8s.io/kind/pkg/log"
)

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
