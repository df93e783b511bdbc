package localenv_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/cozystack/tenantkit/internal/process"
	"github.com/cozystack/tenantkit/localenv"
)

// kubeletEnv starts an environment whose nodes are real kubelets, skipping
// where they cannot run.
func kubeletEnv(t *testing.T, nodes ...localenv.NodeConfig) *localenv.Env {
	t.Helper()
	if testing.Short() {
		t.Skip("starts real kubelets")
	}
	if err := localenv.KubeletAvailable(); err != nil {
		t.Skip(err)
	}
	return localenv.StartT(t, localenv.Config{Cluster: &localenv.ClusterConfig{
		NodeKind: localenv.NodeKubelet, Nodes: nodes,
	}})
}

func TestKubeletNodes(t *testing.T) {
	before := snapshotMachine(t)
	start := time.Now()
	env := kubeletEnv(t, localenv.NodeConfig{Name: "node-a"}, localenv.NodeConfig{Name: "node-b", GPU: true})
	t.Logf("environment with 2 kubelet nodes ready in %s", time.Since(start).Round(100*time.Millisecond))
	ctx := t.Context()
	cs := kubernetes.NewForConfigOrDie(env.RESTConfig())
	cluster := env.Cluster()
	require.Equal(t, localenv.NodeKubelet, cluster.NodeKind())

	t.Run("nodes are real kubelets with their loopback address", func(t *testing.T) {
		for _, name := range cluster.Nodes() {
			n, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			require.NoError(t, err)
			require.True(t, nodeReady(n), "node %s not ready", name)
			require.Equal(t, "v1.37.2", n.Status.NodeInfo.KubeletVersion)
			require.Contains(t, n.Status.NodeInfo.ContainerRuntimeVersion, "containerd://")
			require.Contains(t, n.Status.Addresses, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: cluster.NodeAddr(name).String()})
		}
		b, err := cs.CoreV1().Nodes().Get(ctx, "node-b", metav1.GetOptions{})
		require.NoError(t, err)
		require.Equal(t, "on", b.Labels["gpu"])
	})

	ns := createNamespace(t, cs, "kubelet")
	t.Run("an etcd pod runs in a container on the host network", func(t *testing.T) {
		_, err := cs.CoreV1().Pods(ns).Create(ctx, etcdPod(ns, "etcd"), metav1.CreateOptions{})
		require.NoError(t, err)
		got := waitPod(t, cs, ns, "etcd", podReady)
		require.True(t, got.Spec.HostNetwork, "the host network policy put it there")
		require.Equal(t, int32(2379), got.Spec.Containers[0].Ports[0].HostPort)
		require.Equal(t, corev1.PullNever, got.Spec.Containers[0].ImagePullPolicy, "nothing is ever pulled")
		require.Equal(t, corev1.PullNever, got.Spec.InitContainers[0].ImagePullPolicy)
		require.Equal(t, cluster.NodeAddr(got.Spec.NodeName).String(), got.Status.PodIP)
		requireHealthy(t, got.Status.PodIP)
		info, ok := cluster.Pod(ns, "etcd")
		require.True(t, ok)
		require.NotZero(t, info.Containers[0].PID)
		require.Equal(t, got.Spec.NodeName, info.Node)
		require.Equal(t, got.Status.PodIP, info.PodIP.String())
		require.Equal(t, info.IP, info.PodIP, "host network: the pod listens on its pod IP")
		logNodeMemory(t)
	})

	t.Run("a killed container is restarted by the kubelet", func(t *testing.T) {
		require.NoError(t, cluster.KillContainer(ns, "etcd", "etcd"))
		got := waitPod(t, cs, ns, "etcd", func(p *corev1.Pod) bool {
			return podReady(p) && len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].RestartCount == 1
		})
		require.Equal(t, int32(137), got.Status.ContainerStatuses[0].LastTerminationState.Terminated.ExitCode)
		requireHealthy(t, got.Status.PodIP)
	})

	t.Run("a node that went down runs its pods again when it comes up", func(t *testing.T) {
		node := waitPod(t, cs, ns, "etcd", podReady).Spec.NodeName
		before, ok := cluster.Pod(ns, "etcd")
		require.True(t, ok)
		require.NoError(t, cluster.Down(ctx, node))
		require.True(t, process.Exited(before.Containers[0].PID), "the container died with its node")
		require.NoError(t, cluster.Up(ctx, node))
		got := waitPod(t, cs, ns, "etcd", func(p *corev1.Pod) bool {
			return podReady(p) && p.Status.ContainerStatuses[0].RestartCount > before.Containers[0].Restarts
		})
		requireHealthy(t, got.Status.PodIP)
	})

	t.Run("the machine's network and kernel tunables are untouched", func(t *testing.T) {
		during := snapshotMachine(t)
		require.Equal(t, before.sysctls, during.sysctls)
		require.Equal(t, before.network, during.network)
		require.Equal(t, before.mounts, during.mounts)
	})

	pids := nodeProcesses(t)
	require.NotEmpty(t, pids)
	require.NoError(t, env.Stop())
	t.Run("Stop leaves nothing behind", func(t *testing.T) {
		after := snapshotMachine(t)
		require.Equal(t, before, after)
		for _, pid := range pids {
			require.Eventually(t, func() bool { return process.Exited(pid) }, 10*time.Second, 50*time.Millisecond, "process %d of a node survived Stop", pid)
		}
	})
}

// etcdPod is a single etcd server in a pod; its container names no host
// port: the host network policy adds it.
func etcdPod(ns, name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name: "etcd", Image: localenv.DefaultEtcdImages[0],
				Command: []string{"etcd", "--data-dir=/data/etcd", "--listen-client-urls=http://0.0.0.0:2379",
					"--advertise-client-urls=http://localhost:2379", "--listen-peer-urls=http://localhost:2380"},
				Ports:          []corev1.ContainerPort{{Name: "client", ContainerPort: 2379}},
				VolumeMounts:   []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/health", Port: intstr.FromInt32(2379)}}, PeriodSeconds: 1},
			}},
			// An init container of an etcd image, which never pulls either.
			InitContainers: []corev1.Container{{Name: "version", Image: "registry.k8s.io/etcd:3.6.0-0", Command: []string{"etcd", "--version"}}},
			Volumes:        []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		},
	}
}

func requireHealthy(t *testing.T, ip string) {
	t.Helper()
	resp, err := http.Get("http://" + net.JoinHostPort(ip, "2379") + "/health")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

// machineState is what kubelet nodes must leave as they found it.
type machineState struct {
	sysctls map[string]string
	network string // interfaces, addresses, and the iptables/nftables rules where the tools exist
	mounts  string // the mount table of this (the machine's) mount namespace
	cgroups string // tenantkit's cgroup folders
}

func snapshotMachine(t *testing.T) machineState {
	t.Helper()
	s := machineState{sysctls: map[string]string{}}
	for _, k := range []string{"vm/overcommit_memory", "vm/panic_on_oom", "kernel/panic", "kernel/panic_on_oops", "kernel/keys/root_maxkeys", "kernel/keys/root_maxbytes"} {
		b, err := os.ReadFile("/proc/sys/" + k)
		require.NoError(t, err)
		s.sysctls[k] = strings.TrimSpace(string(b))
	}
	ifaces, err := net.Interfaces()
	require.NoError(t, err)
	var nw strings.Builder
	for _, i := range ifaces {
		addrs, err := i.Addrs()
		require.NoError(t, err)
		fmt.Fprintf(&nw, "%s %v\n", i.Name, addrs)
	}
	for _, cmd := range [][]string{{"iptables-save"}, {"ip6tables-save"}, {"nft", "list", "ruleset"}} {
		if _, err := exec.LookPath(cmd[0]); err == nil {
			out, _ := exec.Command(cmd[0], cmd[1:]...).CombinedOutput()
			nw.WriteString(stripComments(string(out)))
		}
	}
	s.network = nw.String()
	b, err := os.ReadFile("/proc/self/mounts")
	require.NoError(t, err)
	s.mounts = string(b)
	matches, _ := filepath.Glob("/sys/fs/cgroup/*/tenantkit/*")
	s.cgroups = strings.Join(matches, "\n")
	return s
}

// stripComments drops iptables-save's "# Generated by ... on <date>" lines.
func stripComments(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// nodeProcesses returns the PIDs of every process in this test process's
// kubelet node cgroups.
func nodeProcesses(t *testing.T) []int {
	t.Helper()
	dirs, _ := filepath.Glob(fmt.Sprintf("/sys/fs/cgroup/*/tenantkit/%d-*", os.Getpid()))
	return cgroupProcesses(dirs)
}

// cgroupProcesses returns the PIDs in cgroup folders and below.
func cgroupProcesses(dirs []string) []int {
	seen := map[int]bool{}
	var pids []int
	for _, d := range dirs {
		_ = filepath.Walk(d, func(path string, fi os.FileInfo, err error) error {
			if err != nil || !fi.IsDir() {
				return nil
			}
			b, err := os.ReadFile(filepath.Join(path, "cgroup.procs"))
			if err != nil {
				return nil
			}
			for _, f := range strings.Fields(string(b)) {
				if pid, err := strconv.Atoi(f); err == nil && !seen[pid] {
					seen[pid] = true
					pids = append(pids, pid)
				}
			}
			return nil
		})
	}
	return pids
}

// helperEnv is set in the child process of
// TestKubeletNodes_leftoversOfAKilledEnvironment.
const helperEnv = "TENANTKIT_TEST_KUBELET_CHILD"

// TestKubeletNodes_child starts kubelet nodes and waits to be killed; it
// runs only as the child of the leftovers test.
func TestKubeletNodes_child(t *testing.T) {
	if os.Getenv(helperEnv) == "" {
		t.Skip("runs as the child of TestKubeletNodes_leftoversOfAKilledEnvironment")
	}
	env, err := localenv.Start(t.Context(), localenv.Config{Cluster: &localenv.ClusterConfig{
		NodeKind: localenv.NodeKubelet, Nodes: []localenv.NodeConfig{{Name: "node-a"}},
	}})
	require.NoError(t, err)
	_ = env
	fmt.Println("READY")
	select {}
}

func TestKubeletNodes_leftoversOfAKilledEnvironment(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real kubelets")
	}
	if err := localenv.KubeletAvailable(); err != nil {
		t.Skip(err)
	}
	before := snapshotMachine(t)
	child := exec.Command(os.Args[0], "-test.run=^TestKubeletNodes_child$", "-test.timeout=10m")
	child.Env = append(os.Environ(), helperEnv+"=1")
	child.Stderr = os.Stderr
	out, err := child.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, child.Start())
	t.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() })
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if sc.Text() == "READY" {
				ready <- true
			}
		}
		close(ready)
	}()
	select {
	case ok := <-ready:
		require.True(t, ok, "the child exited before its environment was ready")
	case <-time.After(5 * time.Minute):
		t.Fatal("the child's environment did not start")
	}
	require.NoError(t, child.Process.Kill())
	_ = child.Wait()
	leftovers, _ := filepath.Glob(fmt.Sprintf("/sys/fs/cgroup/*/tenantkit/%d-*", child.Process.Pid))
	require.NotEmpty(t, leftovers, "a killed environment leaves its node cgroups")
	orphans := cgroupProcesses(leftovers)
	require.NotEmpty(t, orphans, "containerd outlives a killed environment")

	// The next environment with kubelet nodes cleans up.
	env := kubeletEnv(t, localenv.NodeConfig{Name: "node-a"})
	for _, pid := range orphans {
		require.Eventually(t, func() bool { return process.Exited(pid) }, 10*time.Second, 50*time.Millisecond, "process %d of the dead environment survived", pid)
	}
	for _, dir := range leftovers {
		require.NoDirExists(t, dir)
	}
	require.NoError(t, env.Stop())
	require.Equal(t, before, snapshotMachine(t))
}

// logNodeMemory logs the resident memory of each node's processes by
// program (for the documentation's cost figures).
func logNodeMemory(t *testing.T) {
	nodes, _ := filepath.Glob(fmt.Sprintf("/sys/fs/cgroup/pids/tenantkit/%d-*/*", os.Getpid()))
	for _, node := range nodes {
		if fi, err := os.Stat(node); err != nil || !fi.IsDir() {
			continue
		}
		byProgram := map[string]int{}
		total := 0
		for _, pid := range cgroupProcesses([]string{node}) {
			comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
			status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
			for _, l := range strings.Split(string(status), "\n") {
				if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
					kb, _ := strconv.Atoi(f[1])
					byProgram[strings.TrimSpace(string(comm))] += kb / 1024
					total += kb / 1024
				}
			}
		}
		t.Logf("node %s: RSS %d MiB %v", filepath.Base(node), total, byProgram)
	}
}
