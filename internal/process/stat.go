package process

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// StatFields returns the fields of /proc/<pid>/stat that follow the
// command name (state first, then ppid, ...; the start time is index 19).
// The command name may hold spaces and parentheses, so fields count from
// the last ')'.
func StatFields(pid int) ([]string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return nil, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	return strings.Fields(string(b[i+1:])), nil
}

// Exited reports whether the process pid has exited: it no longer exists,
// or it is a zombie its parent has yet to reap (as a container's process
// is for a moment once its shim has died and init inherits it).
func Exited(pid int) bool {
	f, err := StatFields(pid)
	return err != nil || len(f) == 0 || f[0] == "Z"
}

// StartTime returns the start time of process pid in clock ticks since
// boot (field 22 of /proc/<pid>/stat): with the PID it names one process
// for as long as the machine runs, whatever PIDs are reused.
func StartTime(pid int) (uint64, error) {
	f, err := StatFields(pid)
	if err != nil {
		return 0, err
	}
	if len(f) < 20 {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	return strconv.ParseUint(f[19], 10, 64)
}
