package tenant

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// The chart's forms of kubelet reservations and eviction thresholds.
var (
	memoryQuantity = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$`)
	cpuQuantity    = regexp.MustCompile(`^([0-9]+m|[0-9]+(\.[0-9]+)?)$`)
	percentNumber  = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)
)

const (
	memoryHint = "a valid Kubernetes memory quantity (e.g. 128Mi, 1Gi, 1e9, 500e6)"
	cpuHint    = "a valid Kubernetes CPU quantity (integer millicores like 100m, or decimal cores like 0.5, 1)"
)

// nodeSize is what the chart knows of a node group's size: effective
// memory in bytes and CPU in millicores, from resources, else from the
// instance type the chart looks up. Without a catalogue tenantkit cannot
// look it up, and skips the checks that need it (lookup says so).
type nodeSize struct {
	memory, cpu         float64
	hasMemory, hasCPU   bool
	memoryText, cpuText string
	lookup              bool // the size comes from the instance type
}

func sizeOf(g NodeGroup, it InstanceType, found bool) nodeSize {
	var n nodeSize
	if q := g.Resources.Memory; q != nil {
		n.memory, n.hasMemory, n.memoryText = q.AsApproximateFloat64(), true, q.String()
	} else if found && !it.Memory.IsZero() {
		n.memory, n.hasMemory, n.memoryText = it.Memory.AsApproximateFloat64(), true, it.Memory.String()
	}
	if q := g.Resources.CPU; q != nil {
		n.cpu, n.hasCPU, n.cpuText = float64(q.MilliValue()), true, q.String()
	} else if found && it.CPU > 0 {
		n.cpu, n.hasCPU, n.cpuText = float64(it.CPU*1000), true, fmt.Sprint(it.CPU)
	}
	n.lookup = g.InstanceType != "" && !g.sizedByResources() && !found
	return n
}

// kubeletProblems checks a node group's kubelet settings as the chart
// does: the form and sign of the reservations, the eviction thresholds,
// and that reservations and hard eviction leave room on the node.
func kubeletProblems(name, f string, g NodeGroup, n nodeSize, ps *problems) {
	k := g.Kubelet
	autoMi, autoMilli := 256, 50
	if n.hasMemory {
		autoMi = min(max(int(float64(int(n.memory/1048576))*0.05), 256), 1024)
	}
	if n.hasCPU {
		autoMilli = min(max(int(n.cpu*0.05), 50), 500)
	}
	sysMemOK := reservation(name, f, "systemReservedMemory", k.SystemReservedMemory, true, ps)
	kubeMemOK := reservation(name, f, "kubeReservedMemory", k.KubeReservedMemory, true, ps)
	sysCPUOK := reservation(name, f, "systemReservedCpu", k.SystemReservedCPU, false, ps)
	kubeCPUOK := reservation(name, f, "kubeReservedCpu", k.KubeReservedCPU, false, ps)
	hard := orDefault(k.EvictionHardMemory, defaultEvictionHardMemory)
	soft := orDefault(k.EvictionSoftMemory, defaultEvictionSoftMemory)
	evictionOK := eviction(name, f, hard, soft, ps)
	memOK, cpuOK := sysMemOK && kubeMemOK && evictionOK, sysCPUOK && kubeCPUOK

	sysMem := orDefault(k.SystemReservedMemory, fmt.Sprintf("%dMi", autoMi))
	kubeMem := orDefault(k.KubeReservedMemory, fmt.Sprintf("%dMi", autoMi))
	if n.hasMemory && memOK {
		hardBytes := chartFloat(hard)
		if pct, ok := strings.CutSuffix(hard, "%"); ok {
			hardBytes = n.memory * chartFloat(pct) / 100
		}
		if chartFloat(sysMem)+chartFloat(kubeMem)+hardBytes >= n.memory {
			ps.add(f+".kubelet", tKubeletMemoryTotal, fmt.Sprintf(
				"nodeGroup %s: total reserved memory (systemReservedMemory=%s + kubeReservedMemory=%s + evictionHardMemory=%s) must be less than effective node memory (%s)",
				name, sysMem, kubeMem, hard, n.memoryText))
		}
	}
	sysCPU := orDefault(k.SystemReservedCPU, fmt.Sprintf("%dm", autoMilli))
	kubeCPU := orDefault(k.KubeReservedCPU, fmt.Sprintf("%dm", autoMilli))
	if n.hasCPU && cpuOK && cpuMillicores(sysCPU)+cpuMillicores(kubeCPU) >= n.cpu {
		ps.add(f+".kubelet", tKubeletCPUTotal, fmt.Sprintf(
			"nodeGroup %s: total reserved CPU (systemReservedCpu=%s + kubeReservedCpu=%s) must be less than effective node CPU (%s cores)",
			name, sysCPU, kubeCPU, n.cpuText))
	}
	if !n.hasMemory && !n.lookup && (k.SystemReservedMemory != "" || k.KubeReservedMemory != "" || k.EvictionHardMemory != "" || k.EvictionSoftMemory != "") {
		ps.add(f+".kubelet", tKubeletNeedsMemory, fmt.Sprintf(
			"nodeGroup %s: kubelet memory reservations require effective memory to validate — set resources.memory or instanceType", name))
	}
	if !n.hasCPU && !n.lookup && (k.SystemReservedCPU != "" || k.KubeReservedCPU != "") {
		ps.add(f+".kubelet", tKubeletNeedsCPU, fmt.Sprintf(
			"nodeGroup %s: cannot validate kubelet CPU reservations without effective CPU — set resources.cpu or a valid instanceType", name))
	}
}

// reservation checks one user-set reservation: its form, then its sign.
// It reports whether the value is usable.
func reservation(name, f, key, v string, memory bool, ps *problems) bool {
	if v == "" {
		return true
	}
	field := f + ".kubelet." + key
	re, hint, value := cpuQuantity, cpuHint, cpuMillicores
	if memory {
		re, hint, value = memoryQuantity, memoryHint, chartFloat
	}
	switch {
	case !re.MatchString(v):
		ps.add(field, tKubeletReservedFormat,
			fmt.Sprintf("nodeGroup %s: invalid %s value %q — must be %s", name, key, v, hint))
	case value(v) <= 0:
		ps.add(field, tKubeletReservedPositive,
			fmt.Sprintf("nodeGroup %s: %s must be a positive value, got %s", name, key, v))
	default:
		return true
	}
	return false
}

// eviction checks the effective hard and soft eviction thresholds. It
// reports whether they are usable.
func eviction(name, f, hard, soft string, ps *problems) bool {
	hardPct, softPct := strings.HasSuffix(hard, "%"), strings.HasSuffix(soft, "%")
	bad := false
	for _, t := range []struct {
		key, v, eg string
		pct        bool
	}{{"evictionHardMemory", hard, "7%", hardPct}, {"evictionSoftMemory", soft, "10%", softPct}} {
		if !t.pct && !memoryQuantity.MatchString(t.v) {
			bad = true
			ps.add(f+".kubelet."+t.key, tEvictionFormat, fmt.Sprintf(
				"nodeGroup %s: invalid %s value %q — must be a percentage (e.g. %s) or a valid Kubernetes memory quantity (e.g. 500Mi, 1Gi, 1e9)",
				name, t.key, t.v, t.eg))
		}
	}
	if bad {
		return false
	}
	order := func() {
		ps.add(f+".kubelet.evictionHardMemory", tEvictionHardBelowSoft, fmt.Sprintf(
			"nodeGroup %s: evictionHardMemory (%s) must be strictly less than evictionSoftMemory (%s)", name, hard, soft))
	}
	switch {
	case hardPct && softPct:
		h, hok := percentage(name, f, "evictionHardMemory", strings.TrimSuffix(hard, "%"), ps)
		s, sok := percentage(name, f, "evictionSoftMemory", strings.TrimSuffix(soft, "%"), ps)
		if !hok || !sok {
			return false
		}
		if h >= s {
			order()
			return false
		}
	case !hardPct && !softPct:
		if chartFloat(hard) >= chartFloat(soft) {
			order()
			return false
		}
	default:
		ps.add(f+".kubelet", tEvictionUnitMix, fmt.Sprintf(
			"nodeGroup %s: evictionHardMemory (%s) and evictionSoftMemory (%s) must use the same unit type (both percentage or both absolute)",
			name, hard, soft))
		return false
	}
	return true
}

// percentage checks the number of an eviction percentage.
func percentage(name, f, key, num string, ps *problems) (float64, bool) {
	if !percentNumber.MatchString(num) {
		ps.add(f+".kubelet."+key, tEvictionPercentNumber,
			fmt.Sprintf("nodeGroup %s: %s percentage value %q is not a valid number", name, key, num))
		return 0, false
	}
	v, _ := strconv.ParseFloat(num, 64)
	if v <= 0 || v > 100 {
		ps.add(f+".kubelet."+key, tEvictionPercentRange,
			fmt.Sprintf("nodeGroup %s: %s percentage must be greater than 0 and at most 100, got %s%%", name, key, num))
		return 0, false
	}
	return v, true
}

// chartSuffixes are the unit suffixes of the chart's quantity conversion.
var chartSuffixes = map[string]float64{
	"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40, "Pi": 1 << 50, "Ei": 1 << 60,
	"m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
}

// chartFloat converts a quantity string to a number as the chart's helper
// does: one unit suffix off, the rest parsed as a float (0 when it does
// not parse).
func chartFloat(s string) float64 {
	unit := 1.0
	for suffix, u := range chartSuffixes {
		if strings.HasSuffix(s, suffix) { // at most one suffix matches
			s, unit = strings.TrimSuffix(s, suffix), u
			break
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0
	}
	return v * unit
}

// cpuMillicores converts a CPU string to millicores as the chart does:
// "100m" is 100, other values are cores, truncated to whole millicores.
func cpuMillicores(s string) float64 {
	if m, ok := strings.CutSuffix(s, "m"); ok {
		v, _ := strconv.ParseFloat(m, 64)
		return v
	}
	v, _ := strconv.ParseFloat(s, 64)
	return float64(int(v * 1000))
}
