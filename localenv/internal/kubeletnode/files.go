package kubeletnode

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// PauseImage is the pod sandbox image every node's containerd has (built
// from tenantkit's pause program; nothing is pulled).
const PauseImage = "registry.k8s.io/pause:3.10"

// etcdBaseImage is the name under which each node imports tenantkit's etcd
// image; every etcd image a pod names is tagged from it.
const etcdBaseImage = "tenantkit.local/etcd:latest"

// kernelTunables are the sysctls the kubelet sets at start when they differ
// (see setupKernelTunables in pkg/kubelet/cm), with the values it wants.
// Each node's mount namespace shows it files holding these values instead,
// so the kubelet finds nothing to change and the machine's values stay.
var kernelTunables = []struct{ path, value string }{
	{"vm/overcommit_memory", "1"},
	{"vm/panic_on_oom", "0"},
	{"kernel/panic", "10"},
	{"kernel/panic_on_oops", "1"},
	{"kernel/keys/root_maxkeys", "1000000"},
	{"kernel/keys/root_maxbytes", "25000000"},
}

// paths are a node's files and folders, all under its own folder.
type paths struct{ dir string }

func (p paths) socket() string         { return filepath.Join(p.dir, "containerd.sock") }
func (p paths) containerdConf() string { return filepath.Join(p.dir, "containerd.toml") }
func (p paths) kubeletConf() string    { return filepath.Join(p.dir, "kubelet.yaml") }
func (p paths) script() string         { return filepath.Join(p.dir, "node.sh") }
func (p paths) images() string         { return filepath.Join(p.dir, "images") }
func (p paths) kubeletRoot() string    { return filepath.Join(p.dir, "kubelet") }
func (p paths) podLogs() string        { return filepath.Join(p.dir, "logs", "pods") }
func (p paths) log(name string) string {
	return filepath.Join(p.dir, "logs", name+".log")
}

// containerdConfig is the node's containerd configuration: every folder and
// socket under the node's folder, CRI with runc and overlayfs, the pause
// image built here, and no OOM score changes beyond what the process may do
// (restrict_oom_score_adj: the machine may lack CAP_SYS_RESOURCE).
func containerdConfig(p paths) string {
	return fmt.Sprintf(`version = 2
root = %[1]q
state = %[2]q
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]

[grpc]
  address = %[3]q

[ttrpc]
  address = %[4]q

[plugins."io.containerd.internal.v1.opt"]
  path = %[5]q

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %[6]q
  restrict_oom_score_adj = true
  disable_apparmor = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = %[7]q
    conf_dir = %[8]q
`, filepath.Join(p.dir, "containerd", "root"), filepath.Join(p.dir, "containerd", "state"),
		p.socket(), p.socket()+".ttrpc", filepath.Join(p.dir, "containerd", "opt"), PauseImage,
		filepath.Join(p.dir, "cni", "bin"), filepath.Join(p.dir, "cni", "conf"))
}

// cniConfig is a network configuration that is never used: nodes run only
// host-network pods, but containerd reports its network not ready (and the
// kubelet its node NotReady) while it finds no configuration at all. A pod
// that would need it fails with the plugin missing.
const cniConfig = `{"cniVersion": "1.0.0", "name": "tenantkit-host-network-only", "plugins": [{"type": "tenantkit-host-network-only"}]}
`

// kubeletConfig is the node's KubeletConfiguration.
func kubeletConfig(p paths, addr netip.Addr, cgroupRoot string, lease, maxRestart time.Duration) string {
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: %[1]s
port: 10250
readOnlyPort: 0
healthzBindAddress: %[1]s
healthzPort: 10248
cgroupDriver: cgroupfs
cgroupRoot: %[2]s
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://%[3]s
podLogsDir: %[4]s
volumePluginDir: %[5]s
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: false
authorization:
  mode: AlwaysAllow
makeIPTablesUtilChains: false
protectKernelDefaults: false
rotateCertificates: false
serverTLSBootstrap: false
registerNode: true
nodeLeaseDurationSeconds: %[6]d
nodeStatusUpdateFrequency: %[7]s
evictionHard:
  memory.available: "0%%"
  nodefs.available: "0%%"
  nodefs.inodesFree: "0%%"
  imagefs.available: "0%%"
imageGCHighThresholdPercent: 100
serializeImagePulls: false
crashLoopBackOff:
  maxContainerRestartPeriod: %[8]s
`, addr.String(), cgroupRoot, p.socket(), p.podLogs(), filepath.Join(p.dir, "volume-plugins"),
		int(lease.Seconds()), lease/4, maxRestart)
}

// nodeScript is what runs in the node's own mount and UTS namespaces
// (unshare): it joins the node's cgroups, hides the machine's /run, /var/lib
// and /var/log behind empty tmpfs (the kubelet and containerd write fixed
// paths there), shows the kubelet its kernel tunables as it wants them,
// starts containerd, imports the images and becomes the kubelet.
func nodeScript(p paths, name string, b Binaries, procs []string, kubeletArgs []string) string {
	var s strings.Builder
	s.WriteString("#!/bin/sh\nset -eu\nexport PATH=" + shellPath(b) + "\n")
	for _, f := range procs {
		fmt.Fprintf(&s, "echo $$ > %s\n", quote(f))
	}
	for _, d := range []string{"/run", "/var/lib", "/var/log"} {
		fmt.Fprintf(&s, "mount -t tmpfs -o mode=0755 tenantkit-node %s\n", d)
	}
	for _, t := range kernelTunables {
		file := filepath.Join(p.dir, "sysctl", strings.ReplaceAll(t.path, "/", "."))
		fmt.Fprintf(&s, "if [ -e /proc/sys/%[1]s ]; then printf '%%s\\n' %[2]s > %[3]s; mount --bind -o ro %[3]s /proc/sys/%[1]s; fi\n", t.path, t.value, quote(file))
	}
	fmt.Fprintf(&s, "hostname %s\n", quote(name))
	// A node that was down left its sockets behind.
	fmt.Fprintf(&s, "rm -f %s %s\n", quote(p.socket()), quote(p.socket()+".ttrpc"))
	fmt.Fprintf(&s, "%s --config %s >> %s 2>&1 &\n", quote(b.Containerd), quote(p.containerdConf()), quote(p.log("containerd")))
	fmt.Fprintf(&s, "i=0\nuntil %s -a %s version >/dev/null 2>&1; do i=$((i+1)); [ $i -lt 600 ] || { echo containerd did not start; exit 1; }; sleep 0.1; done\n",
		quote(b.Ctr), quote(p.socket()))
	fmt.Fprintf(&s, "for f in %s/*.tar; do %s -a %s -n k8s.io images import --all-platforms \"$f\" >/dev/null; done\n",
		quote(p.images()), quote(b.Ctr), quote(p.socket()))
	fmt.Fprintf(&s, "echo images imported\nexec %s", quote(b.Kubelet))
	for _, a := range kubeletArgs {
		s.WriteString(" " + quote(a))
	}
	s.WriteString("\n")
	return s.String()
}

// shellPath puts the folders of the runtime binaries (containerd finds its
// shim and runc through PATH) before the usual system folders.
func shellPath(b Binaries) string {
	dirs := []string{filepath.Dir(b.Containerd), filepath.Dir(b.Runc)}
	dirs = append(dirs, "/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")
	return quote(strings.Join(dirs, ":"))
}

// quote quotes s for the shell.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// writeFiles writes the node's configuration files and folders.
func writeFiles(p paths, files map[string]string) error {
	for _, d := range []string{p.images(), p.kubeletRoot(), p.podLogs(), filepath.Join(p.dir, "sysctl"),
		filepath.Join(p.dir, "cni", "bin"), filepath.Join(p.dir, "cni", "conf")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	for name, content := range files {
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}
