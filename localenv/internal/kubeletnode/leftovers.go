package kubeletnode

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/cozystack/tenantkit/internal/process"
)

// registryDir holds one record per running pool, so that the next pool to
// start can tell a dead environment's leftovers from a live one's.
func registryDir() string { return filepath.Join(os.TempDir(), "tenantkit-kubelet-nodes") }

// record is what a pool leaves behind for cleaning up after it.
type record struct {
	// PID and Start identify the owning process; Start is its start time
	// in clock ticks since boot (/proc/<pid>/stat field 22), so a reused
	// PID is not mistaken for the owner.
	PID   int    `json:"pid"`
	Start uint64 `json:"start"`
	// Cgroup is the pool's cgroup folder in every hierarchy.
	Cgroup string `json:"cgroup"`
	// Dir is the pool's folder (containerd and kubelet state).
	Dir string `json:"dir"`
}

// register writes the record of a pool owned by this process.
func register(id, cgroup, dir string) (path string, err error) {
	start, err := process.StartTime(os.Getpid())
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(record{PID: os.Getpid(), Start: start, Cgroup: cgroup, Dir: dir})
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(registryDir(), 0o700); err != nil {
		return "", err
	}
	path = filepath.Join(registryDir(), id+".json")
	return path, os.WriteFile(path, b, 0o600)
}

// errBadRecord is returned by parseRecord for anything but a pool's record.
var errBadRecord = errors.New("not a kubelet pool record")

// parseRecord decodes a record and checks that cleaning up after it stays
// inside tenantkit's cgroups: its cgroup is tenantkit/<one name>.
func parseRecord(b []byte) (record, error) {
	var r record
	if err := json.Unmarshal(b, &r); err != nil {
		return record{}, fmt.Errorf("%w: %w", errBadRecord, err)
	}
	name, ok := strings.CutPrefix(r.Cgroup, cgroupBase+"/")
	if !ok || name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") || r.PID <= 0 {
		return record{}, fmt.Errorf("%w: cgroup %q, pid %d", errBadRecord, r.Cgroup, r.PID)
	}
	if r.Dir != "" && (!filepath.IsAbs(r.Dir) || filepath.Clean(r.Dir) == "/") {
		return record{}, fmt.Errorf("%w: relative dir %q", errBadRecord, r.Dir)
	}
	return r, nil
}

// alive reports whether the record's owner still runs.
func (r record) alive() bool {
	start, err := process.StartTime(r.PID)
	return err == nil && start == r.Start
}

// CleanLeftovers removes what environments that died without stopping
// (killed, crashed) left behind: it kills the processes of their nodes
// (containerd, its shims, kubelets, containers: everything in their
// cgroups), removes those cgroups and their state folders. The mounts the
// nodes made live in the nodes' own mount namespaces and vanish with their
// processes. Pools of live processes are left alone.
func CleanLeftovers(log *slog.Logger) error {
	entries, err := os.ReadDir(registryDir())
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("kubeletnode: leftovers: %w", err)
	}
	if err := checkOwner(registryDir()); err != nil {
		return err
	}
	roots, err := hierarchies()
	if err != nil {
		return fmt.Errorf("kubeletnode: leftovers: %w", err)
	}
	var errs []error
	for _, e := range entries {
		path := filepath.Join(registryDir(), e.Name())
		b, err := os.ReadFile(path)
		if err != nil {
			continue // removed meanwhile by its owner
		}
		r, err := parseRecord(b)
		if err != nil {
			errs = append(errs, fmt.Errorf("kubeletnode: leftovers: %s: %w", path, err))
			continue
		}
		if r.alive() {
			continue
		}
		log.Info("removing the leftovers of a dead environment's kubelet nodes", "owner", r.PID, "cgroup", r.Cgroup, "dir", r.Dir)
		if err := cleanup(roots, r); err != nil {
			errs = append(errs, err)
			continue
		}
		_ = os.Remove(path)
	}
	return errors.Join(errs...)
}

// checkOwner refuses a registry folder that someone else could have
// written: cleaning up after a record kills processes and removes folders.
func checkOwner(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("kubeletnode: leftovers: %w", err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || !ok || int(st.Uid) != os.Geteuid() || fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("kubeletnode: leftovers: %s is not a folder only this user can write; not cleaning up after its records", dir)
	}
	return nil
}

// cleanup kills a pool's processes and removes its cgroups and folder.
func cleanup(roots []string, r record) error {
	if err := killCgroup(roots, r.Cgroup, 30*time.Second); err != nil {
		return fmt.Errorf("kubeletnode: %w", err)
	}
	if err := removeCgroup(roots, r.Cgroup); err != nil {
		return fmt.Errorf("kubeletnode: %w", err)
	}
	if r.Dir != "" {
		if err := os.RemoveAll(r.Dir); err != nil {
			return fmt.Errorf("kubeletnode: %w", err)
		}
	}
	return nil
}
