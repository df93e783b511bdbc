package kubeletnode

import (
	"context"
	"fmt"
	"net/netip"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cozystack/tenantkit/internal/process"
	"github.com/cozystack/tenantkit/localenv/internal/simnode"
)

// apiTimeout bounds the calls of methods that take no context.
const apiTimeout = 10 * time.Second

// Pod returns a pod's node, address and containers, with the PIDs of the
// running ones as containerd reports them. IP and PodIP are both the pod's
// status.podIP, its node's address (pods use the host network). ok is
// false when the pod does not exist or is not on one of the pool's nodes.
func (p *Pool) Pod(namespace, name string) (simnode.Pod, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	pod, err := p.cfg.Client.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return simnode.Pod{}, false
	}
	n, ok := p.nodes[pod.Spec.NodeName]
	if !ok {
		return simnode.Pod{}, false
	}
	info := simnode.Pod{UID: pod.UID, Node: n.cfg.Name, Dir: filepath.Join(n.paths.kubeletRoot(), "pods", string(pod.UID))}
	info.IP, _ = netip.ParseAddr(pod.Status.PodIP)
	info.PodIP = info.IP
	pids := p.taskPIDs(ctx, n)
	for _, c := range pod.Spec.Containers {
		ci := simnode.Container{Name: c.Name}
		if st, ok := containerStatus(pod, c.Name); ok {
			ci.Restarts = st.RestartCount
			ci.LogPath = filepath.Join(n.paths.podLogs(), fmt.Sprintf("%s_%s_%s", namespace, name, pod.UID),
				c.Name, fmt.Sprintf("%d.log", st.RestartCount))
			if st.State.Running != nil {
				ci.PID = pids[containerID(st)]
			}
		}
		info.Containers = append(info.Containers, ci)
	}
	return info, true
}

// Processes returns nil: containerd runs the pods' containers, not this
// process (Pod reports their PIDs). It is there so that the pool and the
// node agent answer the same questions.
func (p *Pool) Processes() []*process.Process { return nil }

// KillContainer kills a pod's running container with SIGKILL through
// containerd, as a crash would; the kubelet restarts it per the pod's
// restart policy.
func (p *Pool) KillContainer(namespace, name, container string) error {
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	pod, err := p.cfg.Client.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("kubeletnode: %w", err)
	}
	n, ok := p.nodes[pod.Spec.NodeName]
	st, found := containerStatus(pod, container)
	if !ok || !found || st.State.Running == nil || containerID(st) == "" {
		return fmt.Errorf("%w: %s/%s %s", ErrNotRunning, namespace, name, container)
	}
	out, err := exec.CommandContext(ctx, p.cfg.Binaries.Ctr, "-a", n.paths.socket(), "-n", "k8s.io",
		"tasks", "kill", "-s", "SIGKILL", containerID(st)).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%w: %s/%s %s: %s", ErrNotRunning, namespace, name, container, strings.TrimSpace(string(out)))
	}
	return nil
}

// taskPIDs returns the PIDs of the node's running containers by container
// ID (ctr tasks ls: "TASK PID STATUS").
func (p *Pool) taskPIDs(ctx context.Context, n *node) map[string]int {
	out, err := exec.CommandContext(ctx, p.cfg.Binaries.Ctr, "-a", n.paths.socket(), "-n", "k8s.io", "tasks", "ls").Output()
	pids := map[string]int{}
	if err != nil {
		return pids
	}
	for _, line := range strings.Split(string(out), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) == 3 && f[2] == "RUNNING" {
			if pid, err := strconv.Atoi(f[1]); err == nil {
				pids[f[0]] = pid
			}
		}
	}
	return pids
}

func containerStatus(pod *corev1.Pod, name string) (corev1.ContainerStatus, bool) {
	for _, st := range pod.Status.ContainerStatuses {
		if st.Name == name {
			return st, true
		}
	}
	return corev1.ContainerStatus{}, false
}

// containerID strips the runtime prefix ("containerd://") of a status's
// container ID.
func containerID(st corev1.ContainerStatus) string {
	_, id, _ := strings.Cut(st.ContainerID, "://")
	return id
}
