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

// Encode is the allocation string HAMi writes for a pod placed on n with
// devices per container (init containers first; nil for a container
// without GPUs). scoreNode appends an empty entry for a GPU-less container
// under each of the node's device types — the registered types, models
// such as "NVIDIA-A100" — while the allocation is kept under the request
// type "NVIDIA" and PatchAnnotations writes only that list
// (pkg/scheduler/score.go:233-281, pkg/device/nvidia/device.go:505-515,
// pkg/device/devices.go:451-484@v2.10.0). So the placeholders survive only
// when a device of n is registered with type exactly "NVIDIA".
func Encode(n Node, containers [][]Alloc) string {
	placeholders := false
	for _, d := range n.Devices {
		placeholders = placeholders || d.Type == "NVIDIA"
	}
	var b strings.Builder
	for _, c := range containers {
		if len(c) == 0 && !placeholders {
			continue
		}
		for _, a := range c {
			b.WriteString(a.UUID + ",NVIDIA," + strconv.Itoa(int(a.Mem)) + "," + strconv.Itoa(int(a.Cores)) + ":")
		}
		b.WriteString(";")
	}
	return b.String()
}

// Decode is DecodePodDevices for NVIDIA (see Counted).
func Decode(s string) ([][]Alloc, bool) { return decode(s) }

// PodEvent is what the pod handler reads of a pod.
type PodEvent struct {
	Key         string
	Annotations map[string]string
	Phase       string
	// Terminating: a deletionTimestamp is set.
	Terminating bool
	// InitCount is len(pod.Spec.InitContainers); InitSucceeded is
	// util.AllInitContainersSucceeded.
	InitCount     int
	InitSucceeded bool
}

// Cache is the scheduler's podManager as its pod handlers keep it
// (pkg/scheduler/scheduler.go:137-224, pkg/device/pods.go:57-123@v2.10.0).
type Cache struct{ pods map[string]*Held }

// Add is onAddPod: no hami.io/vgpu-node, nothing; a finished pod is
// dropped; a terminating one only refreshes the cached object (so one
// first seen terminating is not counted); otherwise the allocation is
// decoded (a pod that does not decode is skipped) and stored, keeping a
// pod's devices once its init containers were released.
func (c *Cache) Add(e PodEvent) {
	if c.pods == nil {
		c.pods = map[string]*Held{}
	}
	node, ok := e.Annotations[AnnoNode]
	if !ok {
		return
	}
	if e.Phase == "Succeeded" || e.Phase == "Failed" {
		delete(c.pods, e.Key)
		return
	}
	if e.Terminating {
		return
	}
	alloc, ok := decode(e.Annotations[AnnoAllocated]) // a missing key decodes to nothing
	if !ok {
		return
	}
	if h := c.pods[e.Key]; h != nil {
		h.Node = node
		if !h.InitReleased {
			h.Containers, h.InitCount = alloc, e.InitCount
		}
		return
	}
	c.pods[e.Key] = &Held{Node: node, InitCount: e.InitCount, Containers: alloc}
}

// Update is onUpdatePod: a pod not yet cached goes through Add; a cached
// one keeps its devices, shrinking to its app containers' entries once
// every init container succeeded.
func (c *Cache) Update(e PodEvent) {
	if _, ok := e.Annotations[AnnoNode]; !ok {
		return
	}
	if e.Phase == "Succeeded" || e.Phase == "Failed" {
		delete(c.pods, e.Key)
		return
	}
	h := c.pods[e.Key]
	if e.Terminating {
		return
	}
	if h == nil {
		c.Add(e)
		return
	}
	if !h.InitReleased && e.InitSucceeded {
		h.InitReleased = true
	}
}

// Delete is onDelPod.
func (c *Cache) Delete(key string) { delete(c.pods, key) }

// Held returns the counted pods, keyed.
func (c *Cache) Held() map[string]Held {
	out := map[string]Held{}
	for k, h := range c.pods {
		out[k] = *h
	}
	return out
}
