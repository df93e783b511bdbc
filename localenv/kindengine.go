package localenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// EngineRefusalError is returned when the container engine refuses what a
// kind node needs and tenantkit has no adaptation for it: Output quotes
// the engine's words.
type EngineRefusalError struct {
	// Engine is the engine's client binary (docker).
	Engine string
	// Args are the arguments of the refused command.
	Args []string
	// Output is the end of what the engine answered.
	Output string
}

func (e *EngineRefusalError) Error() string {
	return fmt.Sprintf("localenv: %s refused `%s %s`: %s", e.Engine, e.Engine, strings.Join(e.Args, " "), e.Output)
}

// unprivilegedNodeFlags replace --privileged for a kind node on an engine
// that refuses it (its bounding set lacks CAP_SYS_RESOURCE): every other
// capability, no seccomp, AppArmor or masked paths, every device, and the
// devices kind's nodes read.
func unprivilegedNodeFlags() []string {
	flags := []string{"--cap-add", "ALL", "--cap-drop", "SYS_RESOURCE",
		"--security-opt", "seccomp=unconfined", "--security-opt", "apparmor=unconfined",
		"--security-opt", "systempaths=unconfined", "--device-cgroup-rule", "a *:* rwm"}
	for _, dev := range []string{"/dev/kmsg", "/dev/fuse"} {
		if _, err := os.Stat(dev); err == nil {
			flags = append(flags, "--device", dev)
		}
	}
	return flags
}

// engineMode is what probing the engine found.
type engineMode struct {
	// refusesPrivileged: kind's --privileged containers are refused, the
	// adaptation works.
	refusesPrivileged bool
	// cgroupV1: the host runs cgroup v1 (the kubelet needs failCgroupV1).
	cgroupV1 bool
}

// probeEngine runs one throwaway container of image with --privileged,
// and where that is refused one with the adaptation. Neither pulls nor
// touches a network (--pull never, --network none).
func probeEngine(ctx context.Context, image string) (engineMode, error) {
	m := engineMode{cgroupV1: !fileExists("/sys/fs/cgroup/cgroup.controllers")}
	run := func(flags ...string) (string, error) {
		args := append([]string{"run", "--rm", "--pull", "never", "--label", kindProbeLabel, "--network", "none"}, flags...)
		args = append(args, "--entrypoint", "/bin/true", image)
		out, err := exec.CommandContext(ctx, "docker", args...).CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	out, err := run("--privileged")
	if err == nil {
		return m, nil
	}
	if ctx.Err() != nil {
		return m, ctx.Err()
	}
	if !strings.Contains(out, "operation not permitted") {
		return m, &EngineRefusalError{Engine: "docker", Args: []string{"run", "--privileged", image}, Output: tailString(out, 500)}
	}
	m.refusesPrivileged = true
	flags := unprivilegedNodeFlags()
	if out, err := run(flags...); err != nil {
		return m, &EngineRefusalError{Engine: "docker", Args: append([]string{"run"}, flags...), Output: tailString(out, 500)}
	}
	return m, nil
}

// kindProbeLabel marks the probe's containers (removed by --rm).
const kindProbeLabel = "io.tenantkit.kind-probe=true"

func tailString(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// nodePreStep runs in each node before kind's entrypoint on an engine that
// refuses --privileged (POSIX sh, whatever the node image): it remounts
// read-write the cgroup mounts the engine gave read-only (kind's entrypoint
// writes the kubelet's cgroups), and, since systempaths=unconfined leaves
// /proc/sys writable and not every sysctl is namespaced, it makes /proc/sys
// read-only apart from /proc/sys/net and shows the kubelet the kernel
// tunables it wants as read-only files (it then writes none): the host's
// kernel.panic, vm.overcommit_memory, ... never change, whichever node image
// runs. tenantkit's own entrypoint finds the marker and skips its copy.
const nodePreStep = `for m in $(awk '$3 ~ /^cgroup/ && $4 ~ /(^|,)ro(,|$)/ {print $2}' /proc/self/mounts); do mount -o remount,bind,rw "$m"; done
if [ ! -e /run/tenantkit-sysctl-protected ]; then
  mkdir -p /kind/sysctl
  mount --bind /proc/sys /proc/sys
  mount --bind /proc/sys/net /proc/sys/net
  for kv in vm/overcommit_memory=1 vm/panic_on_oom=0 kernel/panic=10 kernel/panic_on_oops=1 kernel/keys/root_maxkeys=1000000 kernel/keys/root_maxbytes=25000000; do
    k=${kv%%=*}
    f=/kind/sysctl/$(echo "$k" | tr / .)
    echo "${kv#*=}" >"$f"
    mount --bind "$f" "/proc/sys/$k"
    mount -o remount,bind,ro "/proc/sys/$k"
  done
  mount -o remount,bind,ro /proc/sys
  touch /run/tenantkit-sysctl-protected
fi
exec /usr/local/bin/entrypoint /sbin/init`

// dockerWrapper is the `docker` that kind's own calls find first on PATH on
// an engine that refuses --privileged. `run --privileged` gets the
// adaptation, and its container runs nodePreStep and then kind's
// entrypoint; `exec --privileged` runs as a plain exec
// (it inherits the node's capabilities); where the host has no /lib/modules
// kind's read-only mount of it is left out (docker would create the folder
// on the host), and the node keeps its own. Every other call goes to the
// real docker unchanged.
const dockerWrapper = `#!/bin/bash
# tenantkit: kind's docker calls on an engine that refuses --privileged.
real=%q
drop_modules=%q
flags=(%s)
pre=$(cat "${BASH_SOURCE[0]%%/*}/node-pre-step.sh")
verb=${1:-}
if [[ $verb == exec && ${2:-} == --privileged ]]; then
  shift 2
  exec "$real" exec "$@"
fi
if [[ $verb == run ]]; then
  shift
  out=() priv=0 args=("$@")
  for ((i = 0; i < ${#args[@]}; i++)); do
    a=${args[i]}
    if [[ $a == --privileged ]]; then
      priv=1
    elif [[ -n $drop_modules && $a == --volume && ${args[i+1]:-} == /lib/modules:/lib/modules:ro ]]; then
      i=$((i + 1))
    else
      out+=("$a")
    fi
  done
  if (( priv )); then
    image=${out[-1]}
    unset 'out[-1]'
    exec "$real" run "${out[@]}" "${flags[@]}" --entrypoint /bin/sh "$image" -c "$pre"
  fi
  exec "$real" run "${out[@]}"
fi
exec "$real" "$@"
`

// writeDockerWrapper writes the wrapper into dir as `docker`, and beside it
// the node's pre-step it reads.
func writeDockerWrapper(dir string) error {
	real, err := exec.LookPath("docker")
	if err != nil {
		return err
	}
	dropModules := ""
	if !fileExists("/lib/modules") {
		dropModules = "yes"
	}
	quoted := make([]string, 0)
	for _, f := range unprivilegedNodeFlags() {
		quoted = append(quoted, fmt.Sprintf("%q", f))
	}
	script := fmt.Sprintf(dockerWrapper, real, dropModules, strings.Join(quoted, " "))
	if err := os.WriteFile(filepath.Join(dir, "node-pre-step.sh"), []byte(nodePreStep), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "docker"), []byte(script), 0o755)
}

var errNoEngine = errors.New("no container engine answers (docker info failed)")
