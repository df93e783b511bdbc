package kubeletnode

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cgroupBase is the folder, in every cgroup hierarchy, under which the
// environments' nodes live: <base>/<environment>/<node>, the kubelet's
// cgroupRoot, with the pods' kubepods tree below it.
const cgroupBase = "tenantkit"

// hierarchies returns the mount points of the machine's cgroup hierarchies
// (every v1 controller hierarchy, named ones, and the unified v2 one).
func hierarchies() ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// 36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		fields, fsType := strings.Fields(pre), strings.Fields(post)
		if len(fields) < 5 || len(fsType) == 0 || (fsType[0] != "cgroup" && fsType[0] != "cgroup2") {
			continue
		}
		if !slices.Contains(out, fields[4]) {
			out = append(out, fields[4])
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, errors.New("no cgroup hierarchy is mounted")
	}
	return out, nil
}

// createCgroup creates rel (for example "tenantkit/env/node-a") in every
// hierarchy and returns the cgroup.procs files a process writes its PID
// into to join them all. In a v1 cpuset hierarchy the new folders get
// their parent's cpus and mems, without which no process could join.
func createCgroup(roots []string, rel string) ([]string, error) {
	var procs []string
	for _, root := range roots {
		var err error
		// Another environment's Stop removes the shared cgroupBase folder
		// when it finds it empty: create the path again if it vanished
		// under us.
		for range 5 {
			if err = createPath(root, rel); !errors.Is(err, fs.ErrNotExist) {
				break
			}
		}
		if err != nil {
			return nil, err
		}
		procs = append(procs, filepath.Join(root, rel, "cgroup.procs"))
	}
	return procs, nil
}

// createPath creates rel's folders under one hierarchy's root.
func createPath(root, rel string) error {
	dir := root
	for _, part := range strings.Split(rel, "/") {
		parent := dir
		dir = filepath.Join(dir, part)
		if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("create cgroup %s: %w", dir, err)
		}
		if err := inheritCpuset(parent, dir); err != nil {
			return err
		}
	}
	return nil
}

// inheritCpuset copies cpuset.cpus and cpuset.mems from parent to dir where
// dir has them empty (v1 only: v2 cgroups inherit them).
func inheritCpuset(parent, dir string) error {
	for _, name := range []string{"cpuset.cpus", "cpuset.mems"} {
		own, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || strings.TrimSpace(string(own)) != "" {
			continue // not a v1 cpuset hierarchy, or already set
		}
		v, err := os.ReadFile(filepath.Join(parent, name))
		if err != nil {
			return fmt.Errorf("cgroup %s: %w", parent, err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), v, 0o644); err != nil {
			return fmt.Errorf("cgroup %s: %w", dir, err)
		}
	}
	return nil
}

// pidsUnder returns the PIDs of every process in rel or below it, in any
// hierarchy.
func pidsUnder(roots []string, rel string) []int {
	seen := map[int]bool{}
	var out []int
	for _, root := range roots {
		_ = filepath.WalkDir(filepath.Join(root, rel), func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return nil
			}
			b, err := os.ReadFile(filepath.Join(path, "cgroup.procs"))
			if err != nil {
				return nil
			}
			for _, f := range strings.Fields(string(b)) {
				if pid, err := strconv.Atoi(f); err == nil && !seen[pid] {
					seen[pid] = true
					out = append(out, pid)
				}
			}
			return nil
		})
	}
	return out
}

// killCgroup SIGKILLs every process in rel and below until none is left
// (processes forked meanwhile are caught by the next round), or timeout.
func killCgroup(roots []string, rel string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		pids := pidsUnder(roots, rel)
		if len(pids) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cgroup %s: %d processes still alive after %s: %v", rel, len(pids), timeout, pids)
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// removeCgroup removes rel and everything below it from every hierarchy,
// deepest first. The cgroups must be empty (see killCgroup). A hierarchy
// without rel is skipped.
func removeCgroup(roots []string, rel string) error {
	var errs []error
	for _, root := range roots {
		var dirs []string
		_ = filepath.WalkDir(filepath.Join(root, rel), func(path string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, path)
			}
			return nil
		})
		for i := len(dirs) - 1; i >= 0; i-- {
			if err := rmdirRetry(dirs[i]); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if len(errs) == 0 {
		removeBaseIfEmpty(roots)
	}
	return errors.Join(errs...)
}

// removeBaseIfEmpty removes the cgroupBase folders once no pool uses them
// (a live pool's folder keeps them: rmdir fails, and that is fine).
func removeBaseIfEmpty(roots []string) {
	for _, root := range roots {
		_ = syscall.Rmdir(filepath.Join(root, cgroupBase))
	}
}

// rmdirRetry removes an empty cgroup, retrying while the kernel still
// counts an exiting process in it (EBUSY).
func rmdirRetry(dir string) error {
	var err error
	for range 40 {
		if err = syscall.Rmdir(dir); err == nil || errors.Is(err, syscall.ENOENT) {
			return nil
		}
		if !errors.Is(err, syscall.EBUSY) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("remove cgroup %s: %w", dir, err)
}
