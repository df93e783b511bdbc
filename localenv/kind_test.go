package localenv_test

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/cozystack/tenantkit/localenv"
)

// kindTestEnv gates the kind cluster tests: creating a cluster takes
// minutes and, the first time, builds the node image.
const kindTestEnv = "TENANTKIT_KIND"

// TestKindCluster creates a kind cluster of one control plane and two
// workers, checks that it works (nodes Ready, CoreDNS running, a pod
// resolves a Service's name) and that the host's kernel tunables and
// network namespace are the same before, during and after, apart from
// Docker's own networks: the cluster's, and any other that comes and goes
// meanwhile (another kind test's run by hand beside it, TestKindLeftovers').
func TestKindCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: creates a kind cluster")
	}
	if os.Getenv(kindTestEnv) == "" {
		t.Skipf("set %s=1 to create kind clusters (minutes; builds the node image once)", kindTestEnv)
	}
	before := hostState(t)
	begin := time.Now()
	env, err := localenv.Start(t.Context(), localenv.Config{Provider: localenv.Kind,
		KindCluster: localenv.KindConfig{Workers: 2}, BuildProgress: os.Stderr, Logger: slog.New(slog.NewTextHandler(t.Output(), nil))})
	if errors.Is(err, localenv.ErrKindUnavailable) {
		t.Skip(err)
	}
	require.NoError(t, err)
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			assert.NoError(t, env.Stop())
			requireSameHost(t, before, hostState(t), "host state after Stop")
		}
	})
	t.Logf("kind cluster %s up (3 nodes Ready) in %s", env.KindClusterName(), time.Since(begin).Round(time.Second))
	cs, err := kubernetes.NewForConfig(env.RESTConfig())
	require.NoError(t, err)
	waitCoreDNS(t, cs)
	t.Logf("CoreDNS running %s after Start began", time.Since(begin).Round(time.Second))
	resolveService(t, cs)
	localVolume(t, cs)
	logKindNodeMemory(t, env.KindClusterName())
	during := hostState(t)
	subnet, bridge := kindNetwork(t, env.KindClusterName())
	requireSameHost(t, before, during, fmt.Sprintf("host state during the cluster (its own docker network: %s, %s)", bridge, subnet))
	require.NoError(t, env.Stop())
	stopped = true
	out, err := exec.Command("docker", "ps", "-aq", "--filter", "label=io.x-k8s.kind.cluster="+env.KindClusterName()).Output()
	require.NoError(t, err)
	require.Empty(t, strings.TrimSpace(string(out)), "containers left after Stop")
	requireGone(t, before, hostState(t), bridge)
}

// waitCoreDNS waits until every CoreDNS pod is Running and Ready.
func waitCoreDNS(t *testing.T, cs kubernetes.Interface) {
	t.Helper()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		pods, err := cs.CoreV1().Pods("kube-system").List(t.Context(), metav1.ListOptions{LabelSelector: "k8s-app=kube-dns"})
		require.NoError(c, err)
		require.NotEmpty(c, pods.Items)
		for _, p := range pods.Items {
			require.Equal(c, corev1.PodRunning, p.Status.Phase, p.Name)
			for _, s := range p.Status.ContainerStatuses {
				require.True(c, s.Ready, p.Name)
			}
		}
	}, 5*time.Minute, 2*time.Second)
}

// resolveService creates a Service and a pod on a worker that looks its
// name up through the cluster DNS; the answer must be the ClusterIP.
func resolveService(t *testing.T, cs kubernetes.Interface) {
	t.Helper()
	ctx := t.Context()
	svc, err := cs.CoreV1().Services("default").Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "tk-lookup"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "none"},
			Ports: []corev1.ServicePort{{Port: 80}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	never := corev1.PullNever
	pod, err := cs.CoreV1().Pods("default").Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "tk-lookup"},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
			DNSConfig: &corev1.PodDNSConfig{Options: []corev1.PodDNSConfigOption{{Name: "timeout", Value: ptr("1")}, {Name: "attempts", Value: ptr("1")}}},
			Containers: []corev1.Container{{
				Name: "lookup", Image: "tenantkit.local/node-tools:v1", ImagePullPolicy: never,
				Command: []string{"sh", "-c", "for i in $(seq 30); do getent hosts tk-lookup.default.svc.cluster.local && exit 0; sleep 2; done; exit 1"},
			}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		p, err := cs.CoreV1().Pods("default").Get(ctx, pod.Name, metav1.GetOptions{})
		require.NoError(c, err)
		require.Contains(c, []corev1.PodPhase{corev1.PodSucceeded, corev1.PodFailed}, p.Status.Phase)
	}, 4*time.Minute, 2*time.Second)
	p, err := cs.CoreV1().Pods("default").Get(ctx, pod.Name, metav1.GetOptions{})
	require.NoError(t, err)
	logs, err := cs.CoreV1().Pods("default").GetLogs(pod.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
	require.NoError(t, err)
	require.Equal(t, corev1.PodSucceeded, p.Status.Phase, "lookup pod on %s: %s", p.Spec.NodeName, logs)
	require.Contains(t, string(logs), svc.Spec.ClusterIP, "lookup pod's answer")
	t.Logf("pod %s on %s (IP %s) resolved %s to %s", p.Name, p.Spec.NodeName, p.Status.PodIP, svc.Name, strings.TrimSpace(string(logs)))
}

// localVolume: a claim of the default StorageClass (local-path-provisioner)
// is provisioned for a pod that writes to it and exits.
func localVolume(t *testing.T, cs kubernetes.Interface) {
	t.Helper()
	ctx := t.Context()
	_, err := cs.CoreV1().PersistentVolumeClaims("default").Create(ctx, &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "tk-data"},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("16Mi")}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = cs.CoreV1().Pods("default").Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "tk-writer"},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "w", Image: "tenantkit.local/node-tools:v1", ImagePullPolicy: corev1.PullNever,
				Command:      []string{"sh", "-c", "echo ok >/data/f && cat /data/f"},
				VolumeMounts: []corev1.VolumeMount{{Name: "d", MountPath: "/data"}}}},
			Volumes: []corev1.Volume{{Name: "d", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "tk-data"}}}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		p, err := cs.CoreV1().Pods("default").Get(ctx, "tk-writer", metav1.GetOptions{})
		require.NoError(c, err)
		require.Equal(c, corev1.PodSucceeded, p.Status.Phase)
	}, 3*time.Minute, 2*time.Second)
	pvc, err := cs.CoreV1().PersistentVolumeClaims("default").Get(ctx, "tk-data", metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, corev1.ClaimBound, pvc.Status.Phase)
	t.Logf("claim tk-data bound to %s (local-path) and written by a pod", pvc.Spec.VolumeName)
}

// logKindNodeMemory logs each node container's memory use.
func logKindNodeMemory(t *testing.T, cluster string) {
	out, err := exec.Command("sh", "-c", fmt.Sprintf(
		"docker stats --no-stream --format '{{.Name}} {{.MemUsage}}' $(docker ps -q --filter label=io.x-k8s.kind.cluster=%s)", cluster)).CombinedOutput()
	require.NoError(t, err, string(out))
	t.Logf("memory per node:\n%s", out)
}

// kindNetwork returns the subnet and bridge interface of the cluster's
// docker network.
func kindNetwork(t *testing.T, cluster string) (subnet, bridge string) {
	out, err := exec.Command("docker", "network", "inspect", "--format", "{{.Id}} {{range .IPAM.Config}}{{.Subnet}} {{end}}", "tenantkit-kind-"+cluster).Output()
	require.NoError(t, err)
	f := strings.Fields(string(out))
	require.GreaterOrEqual(t, len(f), 2, "network %s: %s", cluster, out)
	return f[1], "br-" + f[0][:12]
}

// hostSnapshot is what must not change on the host.
type hostSnapshot struct {
	Sysctls  map[string]string
	Iptables string
	Legacy   string
	Nft      string
	Addrs    string
	// dockerSubnets are the subnets of docker's networks just before and
	// just after the snapshot: what requireSameHost leaves out.
	dockerSubnets []string
}

var (
	counters = regexp.MustCompile(`\[\d+:\d+\]`)
	handles  = regexp.MustCompile(` # handle \d+`)
	nftCount = regexp.MustCompile(`counter packets \d+ bytes \d+`)
)

func hostState(t *testing.T) hostSnapshot {
	t.Helper()
	nets := dockerSubnets(t)
	s := hostSnapshot{Sysctls: map[string]string{}}
	for _, k := range []string{"kernel/panic", "kernel/panic_on_oops", "vm/overcommit_memory", "vm/panic_on_oom", "kernel/keys/root_maxkeys", "kernel/keys/root_maxbytes"} {
		b, err := os.ReadFile("/proc/sys/" + k)
		require.NoError(t, err)
		s.Sysctls[k] = strings.TrimSpace(string(b))
	}
	s.Iptables = hostCmd("iptables-save")
	s.Legacy = hostCmd("iptables-legacy-save")
	s.Nft = hostCmd("nft", "list", "ruleset")
	s.Addrs = hostCmd("ip", "-o", "addr")
	s.dockerSubnets = append(nets, dockerSubnets(t)...)
	return s
}

// dockerSubnets returns the subnets of docker's networks.
func dockerSubnets(t *testing.T) []string {
	t.Helper()
	ids, err := exec.Command("docker", "network", "ls", "-q").Output()
	require.NoError(t, err)
	var nets []string
	for _, id := range strings.Fields(string(ids)) {
		out, err := exec.Command("docker", "network", "inspect", "--format", "{{range .IPAM.Config}}{{.Subnet}} {{end}}", id).Output()
		if err == nil { // else removed meanwhile
			nets = append(nets, strings.Fields(string(out))...)
		}
	}
	return nets
}

// hostCmd returns a command's output without comments, packet counters
// and nft rule handles; "" where the command is missing.
func hostCmd(name string, args ...string) string {
	if _, err := exec.LookPath(name); err != nil {
		return ""
	}
	out, _ := exec.Command(name, args...).Output()
	var b bytes.Buffer
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "#") {
			continue
		}
		l = handles.ReplaceAllString(counters.ReplaceAllString(l, ""), "")
		l = nftCount.ReplaceAllString(l, "counter")
		b.WriteString(l + "\n")
	}
	return b.String()
}

// dockerBridge matches the interface of a docker bridge network
// (br-<network id>), which each kind cluster has.
var dockerBridge = regexp.MustCompile(`br-[0-9a-f]{12}`)

// requireSameHost checks that a and b are equal apart from docker's
// networks at either time: the lines that name a docker bridge, a veth
// interface or an address of their subnets (Docker's rules for a published
// port's hairpin name only the container's address). The kernel tunables
// and the rest of the host's network are compared whole.
func requireSameHost(t require.TestingT, a, b hostSnapshot, msg string) {
	var subnets []*regexp.Regexp
	for _, n := range append(slices.Clone(a.dockerSubnets), b.dockerSubnets...) {
		if re := subnetPrefix(n); re != nil {
			subnets = append(subnets, re)
		}
	}
	require.Equal(t, a.apartFromDocker(subnets), b.apartFromDocker(subnets), msg)
}

// subnetPrefix matches the addresses of a docker network's subnet: the
// first two octets of an IPv4 one (docker's pools are /16 and /20), the
// part before "::" of an IPv6 one.
func subnetPrefix(cidr string) *regexp.Regexp {
	addr, _, _ := strings.Cut(cidr, "/")
	if strings.Contains(addr, ":") {
		p, _, _ := strings.Cut(addr, "::")
		return regexp.MustCompile(`(^|[^0-9a-f:])` + regexp.QuoteMeta(p+":"))
	}
	o := strings.Split(addr, ".")
	if len(o) != 4 {
		return nil
	}
	return regexp.MustCompile(`(^|[^0-9.])` + regexp.QuoteMeta(o[0]+"."+o[1]+"."))
}

func (s hostSnapshot) apartFromDocker(subnets []*regexp.Regexp) hostSnapshot {
	drop := func(text string) string {
		var b strings.Builder
		for _, l := range strings.Split(text, "\n") {
			if dockerBridge.MatchString(l) || strings.Contains(l, "veth") || slices.ContainsFunc(subnets, func(re *regexp.Regexp) bool { return re.MatchString(l) }) {
				continue
			}
			b.WriteString(l + "\n")
		}
		return b.String()
	}
	return hostSnapshot{Sysctls: s.Sysctls, Iptables: drop(s.Iptables), Legacy: drop(s.Legacy), Nft: drop(s.Nft), Addrs: drop(s.Addrs)}
}

// requireGone checks that the host is as before the cluster, apart from
// docker's networks, and that nothing names the cluster's own bridge.
func requireGone(t require.TestingT, before, after hostSnapshot, bridge string) {
	requireSameHost(t, before, after, "host state after Stop")
	for _, text := range []string{after.Iptables, after.Legacy, after.Nft, after.Addrs} {
		require.NotContains(t, text, bridge, "the cluster's bridge after Stop")
	}
}

func ptr[T any](v T) *T { return &v }
