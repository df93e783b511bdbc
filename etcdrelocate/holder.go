package etcdrelocate

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/cozystack/tenantkit/internal/process"
)

// A Lease holder's identity names its process so that another run on the
// same machine can prove it gone: "<prefix>/<pid>/<random>/proc=<boot>.
// <pidns>.<pid>.<start>", where boot is the kernel's boot ID
// (/proc/sys/kernel/random/boot_id), pidns the PID namespace's inode and
// start the process start time (/proc/<pid>/stat field 22). A holder of
// the same boot and PID namespace whose PID no longer runs, or runs a
// process started at another time, is dead: it can renew nothing more. Its
// Lease is then taken over after one call timeout (for a request it sent
// before it died), not after the Lease's duration. Anywhere else (another
// machine, another container's PID namespace, a system without /proc)
// nothing is proven and the Lease expires as usual.

// newHolderID returns a holder identity unique to one run: the configured
// prefix (default the host name), the process ID, 8 random bytes and, where
// the system tells them, the process's boot, PID namespace and start time.
func newHolderID(prefix string) string {
	if prefix == "" {
		prefix, _ = os.Hostname()
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	id := fmt.Sprintf("%s/%d/%s", prefix, os.Getpid(), hex.EncodeToString(b[:]))
	if p := procIdentity(os.Getpid()); p != "" {
		id += "/proc=" + p
	}
	return id
}

// procIdentity returns "<boot>.<pidns>.<pid>.<start>" for a running pid of
// this PID namespace, "" where the system does not tell.
func procIdentity(pid int) string {
	boot, ns := bootID(), pidNamespace()
	start, err := process.StartTime(pid)
	if boot == "" || ns == "" || err != nil {
		return ""
	}
	return fmt.Sprintf("%s.%s.%d.%d", boot, ns, pid, start)
}

// holderGone reports whether holder names a process of this machine and
// PID namespace that has exited (or whose PID now runs another process).
func holderGone(holder string) bool {
	_, p, ok := strings.Cut(holder, "/proc=")
	if !ok {
		return false
	}
	f := strings.Split(p, ".")
	if len(f) != 4 || f[0] != bootID() || f[1] != pidNamespace() {
		return false
	}
	pid, err := strconv.Atoi(f[2])
	if err != nil || pid <= 0 {
		return false
	}
	start, err := process.StartTime(pid)
	return process.Exited(pid) || err != nil || strconv.FormatUint(start, 10) != f[3]
}

func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.ReplaceAll(strings.TrimSpace(string(b)), "-", "")
}

func pidNamespace() string {
	l, err := os.Readlink("/proc/self/ns/pid") // "pid:[4026531836]"
	if err != nil {
		return ""
	}
	return strings.Trim(strings.TrimPrefix(l, "pid:"), "[]")
}
