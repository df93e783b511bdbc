package etcdlayout_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cozystack/tenantkit/localenv"
	"github.com/cozystack/tenantkit/localenv/etcdlayout"
)

// eventually polls cond every 200ms until it returns nil or timeout passes,
// then fails with cond's last error.
func eventually(t *testing.T, timeout time.Duration, what string, cond func(ctx context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	var last error
	for {
		cctx, ccancel := context.WithTimeout(ctx, 5*time.Second)
		last = cond(cctx)
		ccancel()
		if last == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: not done after %s: %v", what, timeout, last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func pod(t *testing.T, tn *etcdlayout.Tenant, name string) *corev1.Pod {
	t.Helper()
	p, err := tn.Kube().CoreV1().Pods(tn.Namespace).Get(t.Context(), name, metav1.GetOptions{})
	require.NoError(t, err)
	return p
}

func ready(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// memberID finds a member by peer URL (never by name, which is empty until
// a member starts); 0 means not a member.
func memberID(ctx context.Context, cli *clientv3.Client, peerURL string) (id uint64, learner bool, err error) {
	resp, err := cli.MemberList(ctx)
	if err != nil {
		return 0, false, err
	}
	for _, m := range resp.Members {
		for _, u := range m.PeerURLs {
			if u == peerURL {
				return m.ID, m.IsLearner, nil
			}
		}
	}
	return 0, false, nil
}

// rssKiB reads a process's resident set size from /proc.
func rssKiB(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return n
		}
	}
	return 0
}

// logMemory logs the RSS of every process of the environment, the etcd
// pods of tenant "demo" included (on kubelet nodes without the kubelets,
// containerd and shims: TestKubeletNodes logs those), and the test process (which runs the node agent, the
// cluster DNS and the local volume cleaner).
func logMemory(t *testing.T, env *localenv.Env) {
	t.Helper()
	total := 0
	for _, c := range env.Components() {
		if c.Process == nil {
			continue
		}
		r := rssKiB(c.Process.PID())
		total += r
		t.Logf("rss %-24s %7.1f MiB", c.Name, float64(r)/1024)
	}
	pods := 0
	for i := range 3 {
		info, ok := env.Cluster().Pod(etcdlayout.Namespace("demo"), etcdlayout.PodName(i))
		if !ok || len(info.Containers) == 0 {
			continue
		}
		r := rssKiB(info.Containers[0].PID)
		pods += r
		t.Logf("rss %-24s %7.1f MiB", etcdlayout.PodName(i), float64(r)/1024)
	}
	self := rssKiB(os.Getpid())
	t.Logf("rss total: servers %.1f MiB + pod etcds %.1f MiB = %.1f MiB; test process (agent, DNS, cleaner, clients) %.1f MiB",
		float64(total)/1024, float64(pods)/1024, float64(total+pods)/1024, float64(self)/1024)
}
