package nodeagent

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// launch is everything needed to start a container's process.
type launch struct {
	args    []string
	env     []string
	rootfs  string
	logPath string
	mounts  []mount
}

// mount maps a path inside the container to a directory on this machine.
type mount struct {
	containerPath string
	hostPath      string
}

// prepare materialises a container's volumes and computes its command line
// and environment. The container's view of the filesystem is mapped onto
// this machine: an absolute path under a volume mount becomes the volume's
// directory, any other absolute path lands in the container's own root
// directory under the pod folder, so nothing outside the environment is
// touched. Listen addresses meaning "all interfaces" or "localhost" become
// the pod IP, the pod's only interface in the simulated network.
func (w *podWorker) prepare(ctx context.Context, pod *corev1.Pod, spec corev1.Container) (*launch, error) {
	vols, err := w.volumes(ctx, pod)
	if err != nil {
		return nil, err
	}
	l := &launch{
		rootfs:  filepath.Join(w.dir, "containers", spec.Name, "rootfs"),
		logPath: filepath.Join(w.dir, "containers", spec.Name+".log"),
	}
	if err := os.MkdirAll(l.rootfs, 0o700); err != nil {
		return nil, err
	}
	for _, vm := range spec.VolumeMounts {
		dir, ok := vols[vm.Name]
		if !ok {
			return nil, fmt.Errorf("volume mount %s: no volume %q in the pod", vm.MountPath, vm.Name)
		}
		if vm.SubPath != "" {
			dir = filepath.Join(dir, filepath.Clean("/"+vm.SubPath))
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return nil, err
			}
		}
		l.mounts = append(l.mounts, mount{containerPath: path.Clean(vm.MountPath), hostPath: dir})
	}
	// Longest container path first, so nested mounts win.
	slices.SortFunc(l.mounts, func(a, b mount) int { return len(b.containerPath) - len(a.containerPath) })

	env, err := w.containerEnv(ctx, pod, spec)
	if err != nil {
		return nil, err
	}
	lookup := envLookup(env)
	var argv []string
	if len(spec.Command) > 0 {
		if base := path.Base(spec.Command[0]); base != "etcd" {
			return nil, fmt.Errorf("command %q: the node agent only runs etcd", spec.Command[0])
		}
		argv = append(argv, spec.Command[1:]...)
	}
	argv = append(argv, spec.Args...)
	ip := w.podIP()
	for _, a := range argv {
		l.args = append(l.args, l.rewriteArg(Expand(a, lookup), ip))
	}
	for _, e := range env {
		l.env = append(l.env, e.name+"="+l.rewrite(e.value, ip))
	}
	l.env = append(l.env, "HOSTNAME="+hostname(pod))
	if dns := w.agent.cfg.DNSServer; dns != "" {
		l.env = append(l.env, "TENANTKIT_DNS_SERVER="+dns)
	}
	return l, nil
}

func hostname(pod *corev1.Pod) string {
	if pod.Spec.Hostname != "" {
		return pod.Spec.Hostname
	}
	return pod.Name
}

// rewriteArg rewrites the value of a "--flag=value" argument, or a whole
// argument.
func (l *launch) rewriteArg(arg string, ip netip.Addr) string {
	if strings.HasPrefix(arg, "-") {
		if flag, value, ok := strings.Cut(arg, "="); ok {
			return flag + "=" + l.rewrite(value, ip)
		}
		return arg
	}
	return l.rewrite(arg, ip)
}

// rewrite maps a container path or a list of URLs to this machine.
func (l *launch) rewrite(v string, ip netip.Addr) string {
	if strings.HasPrefix(v, "/") {
		return l.hostPath(v)
	}
	if strings.Contains(v, "://") {
		return rewriteURLs(v, ip)
	}
	return v
}

// hostPath maps an absolute container path to this machine.
func (l *launch) hostPath(p string) string {
	p = path.Clean(p)
	for _, m := range l.mounts {
		if p == m.containerPath {
			return m.hostPath
		}
		if rest, ok := strings.CutPrefix(p, strings.TrimSuffix(m.containerPath, "/")+"/"); ok {
			return filepath.Join(m.hostPath, rest)
		}
	}
	return filepath.Join(l.rootfs, p)
}

// rewriteURLs replaces wildcard and loopback hosts in a comma-separated URL
// list with the pod IP; other URLs (DNS names) stay as they are.
func rewriteURLs(v string, ip netip.Addr) string {
	parts := strings.Split(v, ",")
	for i, p := range parts {
		u, err := url.Parse(p)
		if err != nil || u.Host == "" {
			continue
		}
		switch u.Hostname() {
		case "0.0.0.0", "::", "localhost", "127.0.0.1", "::1":
			port := u.Port()
			u.Host = ip.String()
			if port != "" {
				u.Host = net.JoinHostPort(ip.String(), port)
			}
			parts[i] = u.String()
		}
	}
	return strings.Join(parts, ",")
}
