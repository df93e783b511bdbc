package discovery

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// SysfsPCIAddress turns NVML's bus id into the name of the device's sysfs
// directory the way HAMi's plugin does: drop a leading "0000" (NVML writes
// an 8-digit domain, sysfs a 4-digit one) and lower-case the rest, so
// "00000000:3B:00.0" becomes "0000:3b:00.0".
func SysfsPCIAddress(busID string) string {
	return strings.ToLower(strings.TrimPrefix(busID, "0000"))
}

// numaNode reads <root>/bus/pci/devices/<address>/numa_node; -1 (no NUMA
// affinity) becomes 0, as in HAMi.
func numaNode(root, busID string) (int, error) {
	p := filepath.Join(root, "bus", "pci", "devices", SysfsPCIAddress(busID), "numa_node")
	b, err := os.ReadFile(p)
	if err != nil {
		return 0, fmt.Errorf("read NUMA node: %w", err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, fmt.Errorf("read NUMA node %s: %q is not a number", p, strings.TrimSpace(string(b)))
	}
	return max(n, 0), nil
}
