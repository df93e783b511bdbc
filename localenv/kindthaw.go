package localenv

import (
	"bufio"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// thawNodes thaws every frozen cgroup v1 freezer under the node containers
// of kind cluster name and returns how many it thawed. runc kills a
// container by freezing its cgroup, signalling, then thawing it; a node
// deleted while its runc is half-way leaves that cgroup frozen, and the
// frozen task keeps the node's init from exiting: docker then cannot
// remove the node ("tried to kill container, but did not receive an exit
// event"). Only the nodes' own cgroups are written; on cgroup v2 hosts
// (no freezer hierarchy) nothing is.
func thawNodes(name string) int {
	ids, err := kindNodeContainers(name)
	if err != nil {
		return 0
	}
	thawed := 0
	for _, id := range ids {
		pid, err := exec.Command("docker", "inspect", "-f", "{{.State.Pid}}", id).Output()
		if err != nil {
			continue
		}
		root := freezerCgroup(strings.TrimSpace(string(pid)))
		if root == "" {
			continue
		}
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.Name() != "freezer.state" {
				return nil
			}
			if state, _ := os.ReadFile(p); strings.TrimSpace(string(state)) == "FROZEN" {
				if os.WriteFile(p, []byte("THAWED"), 0) == nil {
					thawed++
				}
			}
			return nil
		})
	}
	return thawed
}

// freezerCgroup returns the cgroup v1 freezer folder of process pid ("" on
// cgroup v2, or when pid is gone).
func freezerCgroup(pid string) string {
	if pid == "" || pid == "0" {
		return ""
	}
	f, err := os.Open(filepath.Join("/proc", pid, "cgroup"))
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) == 3 && parts[1] == "freezer" {
			dir := filepath.Join("/sys/fs/cgroup/freezer", parts[2])
			if _, err := os.Stat(dir); err == nil {
				return dir
			}
		}
	}
	return ""
}
