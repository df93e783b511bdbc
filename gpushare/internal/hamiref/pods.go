package hamiref

import (
	"strconv"
	"strings"
)

// Annotation keys the scheduler reads from a placed pod.
const (
	AnnoNode      = "hami.io/vgpu-node"
	AnnoAllocated = "hami.io/vgpu-devices-allocated"
)

// Counted is what the scheduler's pod handler (HAMi:pkg/scheduler/
// scheduler.go onAddPod) keeps of a pod: pods without hami.io/vgpu-node and
// finished pods (Succeeded, Failed) are not counted; the allocation is
// decoded with device.DecodePodDevices, and a pod whose allocation does not
// decode is skipped.
func Counted(annos map[string]string, phase string) (node string, alloc [][]Alloc, ok bool) {
	node, ok = annos[AnnoNode]
	if !ok || node == "" || phase == "Succeeded" || phase == "Failed" {
		return "", nil, false
	}
	raw, ok := annos[AnnoAllocated]
	if !ok {
		return "", nil, false
	}
	alloc, ok = decode(raw)
	return node, alloc, ok
}

// decode is DecodePodDevices for NVIDIA: ";" ends each container, ":" each
// device, a device needs at least four "," fields with whole numbers for
// memory and cores.
func decode(s string) ([][]Alloc, bool) {
	var out [][]Alloc
	parts := strings.Split(s, ";")
	if strings.HasSuffix(s, ";") {
		parts = parts[:len(parts)-1]
	}
	for _, ctr := range parts {
		var c []Alloc
		for _, dev := range strings.Split(ctr, ":") {
			if dev == "" {
				continue
			}
			f := strings.Split(dev, ",")
			if len(f) < 4 {
				return nil, false
			}
			mem, err1 := strconv.Atoi(f[2])
			cores, err2 := strconv.Atoi(f[3])
			if err1 != nil || err2 != nil {
				return nil, false
			}
			c = append(c, Alloc{UUID: f[0], Mem: int32(mem), Cores: int32(cores)})
		}
		out = append(out, c)
	}
	return out, true
}
