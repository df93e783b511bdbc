// Package hamiref is a deliberately simple reference model of how HAMi
// v2.10's scheduler extender decides a pod's NVIDIA GPUs, for gpushare's
// differential tests only. It was written from reading HAMi's source
// (Project-HAMi/HAMi at v2.10.0; each rule cites the file and function it
// comes from) and shares no code with gpushare: it keeps HAMi's own shapes
// (a DeviceUsage with Used/Usedmem/Usedcores, a ContainerDeviceRequest with
// 101 as the "unset" percentage, policy strings, raw pod annotations) and
// HAMi's procedure (score every device, sort.Sort the node's device list
// with HAMi's Less, walk it from the end), so that a disagreement with
// gpushare points at gpushare.
//
// Besides the decision it models the webhook and request derivation
// (Webhook, Requests: MutateAdmission and GenerateResourceRequests), the
// bytes the scheduler writes (Encode: no placeholder for a GPU-less
// container unless a device is typed exactly "NVIDIA"), and the pod
// handlers' history (Cache: terminating pods, init release, positional
// collapse in Recount). Issue 20 re-read each of these in HAMi v2.10.0's
// source rather than in gpushare; every fact here was established by
// reading (building HAMi beside it was tried, but its dependencies did not
// download in time), with file:line@v2.10.0 where cited.
//
// Namespace quotas are quota.go. Out of scope, as in gpushare:
// topology-aware pair scores and dynamic MIG placement. Sidecar init containers (restartPolicy: Always) are plain
// init containers here, as in HAMi v2.10, which never reads an init
// container's restartPolicy.
package hamiref

import (
	"sort"
	"strconv"
	"strings"
)

// Annotation keys HAMi reads from a pod (HAMi:pkg/device/nvidia/device.go
// constants, HAMi:pkg/util/types.go).
const (
	AnnoUseType    = "nvidia.com/use-gputype"
	AnnoNoUseType  = "nvidia.com/nouse-gputype"
	AnnoUseUUID    = "nvidia.com/use-gpuuuid"
	AnnoNoUseUUID  = "nvidia.com/nouse-gpuuuid"
	AnnoMode       = "nvidia.com/vgpu-mode"
	AnnoNUMABind   = "nvidia.com/numa-bind"
	AnnoNodePolicy = "hami.io/node-scheduler-policy"
	AnnoGPUPolicy  = "hami.io/gpu-scheduler-policy"
)

// Device is HAMi's device.DeviceUsage: registration plus usage.
type Device struct {
	ID       string
	Index    uint
	NUMA     int
	Type     string
	Mode     string
	Health   bool
	Cordoned bool // listed in hami.io/device-cordon (NodeInfo)

	Count, Totalmem, Totalcore int32
	Used, Usedmem, Usedcores   int32
}

// Node is a node's device list in registration order (the order
// GetNodeDevices decodes hami.io/node-nvidia-register in).
type Node struct {
	Name    string
	Devices []Device
}

// Container is one container's ContainerDeviceRequest
// (HAMi:pkg/device/devices.go); Nums 0 asks for nothing.
type Container struct {
	Init             bool
	Nums             int32
	Memreq           int32
	MemPercentagereq int32 // 101 means unset
	Coresreq         int32
}

// Weights are util.DeviceScoringWeights; the zero value means 1,1,1.
type Weights struct{ Slot, Core, Memory int32 }

// Pod is what the scheduler reads of a pod: its requests (init containers
// first, HAMi:pkg/device/devices.go Resourcereqs) and annotations.
type Pod struct {
	Containers  []Container
	Annotations map[string]string
	Weights     Weights
	// Namespace and Quota are for the namespace quota check (nil Quota:
	// none); NumInit is len(spec.initContainers).
	Namespace string
	Quota     *QuotaManager
	NumInit   int
}

// Alloc is one device entry HAMi writes (ContainerDevice).
type Alloc struct {
	UUID       string
	Mem, Cores int32
}

// NodeResult is scoreNode's outcome on one node.
type NodeResult struct {
	Name string
	// Score is ComputeDefaultScore: the node's usage before the pod.
	Score float32
	Fits  bool
	// Containers has each container's devices when Fits, init first.
	Containers [][]Alloc
	// Reasons counts HAMi's reasons for the first container that failed
	// (common.GenReason), or holds NodeInsufficientDevice.
	Reasons map[string]int
}

// Decision is Filter's outcome.
type Decision struct {
	// Nodes has one result per node, in input order.
	Nodes []NodeResult
	// Best are the nodes HAMi may return: fitting nodes whose score is the
	// last after sort.Sort(NodeScoreList). HAMi scores nodes in goroutines
	// and sorts unstably, so among equal scores its choice is not
	// determined.
	Best []string
}

// Result returns the result for node name.
func (d Decision) Result(name string) (NodeResult, bool) {
	for _, r := range d.Nodes {
		if r.Name == name {
			return r, true
		}
	}
	return NodeResult{}, false
}

// Schedule is Filter's decision for pod on nodes whose devices carry their
// usage. defaultNodePolicy and defaultGPUPolicy are the scheduler's
// --node-scheduler-policy and --gpu-scheduler-policy (HAMi's chart:
// binpack and spread).
func Schedule(nodes []Node, pod Pod, defaultNodePolicy, defaultGPUPolicy string) Decision {
	nodePolicy := defaultNodePolicy
	if v, ok := pod.Annotations[AnnoNodePolicy]; ok { // score.go resolveNodeSchedulerPolicy
		nodePolicy = strings.TrimSpace(v)
	}
	gpuPolicy := defaultGPUPolicy
	if v, ok := pod.Annotations[AnnoGPUPolicy]; ok { // util.GetGPUSchedulerPolicyByPod
		gpuPolicy = v
	}
	var d Decision
	for _, n := range nodes {
		d.Nodes = append(d.Nodes, scoreNode(n, pod, gpuPolicy))
	}
	// policy/node_policy.go NodeScoreList.Less: spread sorts descending,
	// anything else ascending; Filter takes the last.
	var best float32
	found := false
	for _, r := range d.Nodes {
		if !r.Fits {
			continue
		}
		better := r.Score > best
		if nodePolicy == "spread" {
			better = r.Score < best
		}
		if !found || better {
			best, found = r.Score, true
		}
	}
	for _, r := range d.Nodes {
		if r.Fits && r.Score == best {
			d.Best = append(d.Best, r.Name)
		}
	}
	return d
}

// scoreNode follows HAMi:pkg/scheduler/score.go scoreNode: the node score
// from usage before the pod; each init container fitted on its own copy of
// the node (init containers run one at a time); the app containers fitted
// one after another on one copy that sees the earlier ones.
func scoreNode(n Node, pod Pod, gpuPolicy string) NodeResult {
	r := NodeResult{Name: n.Name, Score: defaultScore(n.Devices)}
	app := cloneDevices(n.Devices)
	// The PodDevices["NVIDIA"] of each phase (allocateInitContainers,
	// allocateAppContainers): a GPU-less container takes an empty entry
	// only where a device is typed exactly "NVIDIA" (baseTypes).
	empty := false
	for _, d := range n.Devices {
		empty = empty || d.Type == "NVIDIA"
	}
	var initAllocs, appAllocs [][]Alloc
	for _, c := range pod.Containers {
		var alloc []Alloc
		if c.Nums > 0 {
			work, allocated := app, appAllocs
			if c.Init {
				work, allocated = cloneDevices(n.Devices), initAllocs // allocateInitContainers: appNodeCopy.DeepCopy()
			}
			var reasons map[string]int
			alloc, reasons = fitInDevices(work, c, pod, gpuPolicy, allocated)
			if reasons != nil {
				r.Reasons = reasons
				return r
			}
		}
		switch {
		case c.Nums == 0 && !empty:
		case c.Init:
			initAllocs = append(initAllocs, alloc)
		default:
			appAllocs = append(appAllocs, alloc)
		}
		r.Containers = append(r.Containers, alloc)
	}
	r.Fits = true
	return r
}

func cloneDevices(ds []Device) []Device { return append([]Device(nil), ds...) }

// defaultScore is policy/node_policy.go ComputeDefaultScore: 10 × (used
// slots / slots + used cores / cores + used memory / memory) over all of
// the node's devices, in float32.
func defaultScore(ds []Device) float32 {
	var used, usedCore, usedMem, total, totalCore, totalMem int32
	for _, d := range ds {
		used += d.Used
		usedCore += d.Usedcores
		usedMem += d.Usedmem
		total += d.Count
		totalCore += d.Totalcore
		totalMem += d.Totalmem
	}
	var use, core, mem float32
	if total != 0 {
		use = float32(used) / float32(total)
	}
	if totalCore != 0 {
		core = float32(usedCore) / float32(totalCore)
	}
	if totalMem != 0 {
		mem = float32(usedMem) / float32(totalMem)
	}
	return 10 * (use + core + mem)
}

// fitInDevices is score.go fitInDevices for one NVIDIA request: score every
// device, sort the list in place (the order carries over to the next
// container), check the count, Fit, and add the usage. It returns the
// devices, or nil and the reasons.
func fitInDevices(devs []Device, c Container, pod Pod, gpuPolicy string, allocated [][]Alloc) ([]Alloc, map[string]int) {
	scores := make([]float32, len(devs))
	for i := range devs {
		scores[i] = deviceScore(&devs[i], c, pod.Weights)
	}
	sort.Sort(&deviceList{devs: devs, scores: scores, policy: gpuPolicy, numaBind: numaBind(pod)})
	// getNodeResources: the devices whose type contains "nvidia", in the
	// sorted order.
	var typed []Device
	for _, d := range devs {
		if strings.Contains(strings.ToLower(d.Type), "nvidia") {
			typed = append(typed, d)
		}
	}
	if int(c.Nums) > len(typed) {
		return nil, map[string]int{"NodeInsufficientDevice": 1}
	}
	picks, reasons := fit(typed, c, pod, gpuPolicy, allocated)
	if reasons != nil {
		return nil, reasons
	}
	for _, p := range picks {
		for i := range devs {
			if devs[i].ID == p.UUID { // nvidia AddResourceUsage
				devs[i].Used++
				devs[i].Usedmem += p.Mem
				devs[i].Usedcores += p.Cores
			}
		}
	}
	return picks, nil
}

// deviceScore is policy/gpu_policy.go ComputeScore (lines 194-221@v2.10.0).
// The request terms are added only for requests whose Type equals the
// device's: the NVIDIA request type is "NVIDIA", so only a device
// registered with type exactly "NVIDIA" gets them: one slot, the cores
// (unclamped), and the percentage of the card when it is neither 0 nor
// 101, else Memreq.
func deviceScore(d *Device, c Container, w Weights) float32 {
	if d.Count == 0 || d.Totalcore == 0 || d.Totalmem == 0 {
		return 0
	}
	if w == (Weights{}) {
		w = Weights{1, 1, 1}
	}
	var req, core0, mem0 int32
	if d.Type == "NVIDIA" {
		req, core0 = 1, c.Coresreq
		if c.MemPercentagereq != 0 && c.MemPercentagereq != 101 {
			mem0 = int32(int64(d.Totalmem) * int64(c.MemPercentagereq) / 100)
		} else {
			mem0 = c.Memreq
		}
	}
	used := float32(req+d.Used) / float32(d.Count)
	core := float32(core0+d.Usedcores) / float32(d.Totalcore)
	mem := float32(mem0+d.Usedmem) / float32(d.Totalmem)
	return float32(10) * (float32(w.Slot)*used + float32(w.Core)*core + float32(w.Memory)*mem)
}

// numaBind is scheduler.go numaBindingRequested.
func numaBind(pod Pod) bool {
	b, err := strconv.ParseBool(pod.Annotations[AnnoNUMABind])
	return err == nil && b
}

// deviceList is policy/gpu_policy.go DeviceUsageList as a sort.Interface.
type deviceList struct {
	devs     []Device
	scores   []float32
	policy   string
	numaBind bool
}

func (l *deviceList) Len() int { return len(l.devs) }

func (l *deviceList) Swap(i, j int) {
	l.devs[i], l.devs[j] = l.devs[j], l.devs[i]
	l.scores[i], l.scores[j] = l.scores[j], l.scores[i]
}

// Less is DeviceUsageList.Less: a comma chain (or bare "numa") compares by
// its sort keys and then by index; a single name keeps its v2.9-era
// branches (mutex: busy first; numa-bind: NUMA groups; binpack and spread:
// score, then NUMA), with no further tie-break, so equal devices keep the
// order sort.Sort leaves them in.
func (l *deviceList) Less(i, j int) bool {
	policy := strings.TrimSpace(l.policy)
	if strings.Contains(policy, ",") || policy == "numa" {
		return l.lessByChain(i, j)
	}
	si, sj := l.scores[i], l.scores[j]
	ni, nj := l.devs[i].NUMA, l.devs[j].NUMA
	binpack := policy == "binpack"
	if policy == "mutex" {
		if ui, uj := l.devs[i].Used, l.devs[j].Used; ui != uj {
			return ui > uj
		}
		return ni < nj
	}
	if l.numaBind {
		if binpack {
			if ni == nj {
				return si < sj
			}
			return ni > nj
		}
		if ni == nj {
			return si > sj
		}
		return ni < nj
	}
	if binpack {
		if si != sj {
			return si < sj
		}
		return ni < nj
	}
	if si != sj {
		return si > sj
	}
	return ni < nj
}

// lessByChain is gpu_policy.go lessByChain with gpuSortKeyChain: the sort
// keys binpack, spread and numa in the order written, each once; spread
// when there is none; numa moved first under numa-bind; index last.
func (l *deviceList) lessByChain(i, j int) bool {
	var chain []string
	for p := range strings.SplitSeq(l.policy, ",") {
		k := strings.TrimSpace(p)
		if (k == "binpack" || k == "spread" || k == "numa") && !contains(chain, k) {
			chain = append(chain, k)
		}
	}
	if len(chain) == 0 {
		chain = []string{"spread"}
	}
	if l.numaBind && chain[0] != "numa" {
		with := []string{"numa"}
		for _, k := range chain {
			if k != "numa" {
				with = append(with, k)
			}
		}
		chain = with
	}
	a, b := &l.devs[i], &l.devs[j]
	sa, sb := l.scores[i], l.scores[j]
	for _, k := range chain {
		switch {
		case k == "binpack" && sa != sb:
			return sa < sb
		case k == "spread" && sa != sb:
			return sa > sb
		case k == "numa" && a.NUMA != b.NUMA:
			return a.NUMA < b.NUMA
		}
	}
	return a.Index < b.Index
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}
