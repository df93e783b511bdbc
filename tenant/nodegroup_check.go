package tenant

import (
	"fmt"
	"maps"
	"slices"
)

// validateNodeGroups checks every node group as the chart does (errors)
// and as tenantkit did before it followed the chart (warnings). With a
// catalogue of instance types it decides the lookup rules too, for the
// chart's default group as well when there is no other.
func (s KubernetesSpec) validateNodeGroups(catalogue map[string]InstanceType, ps, ws *problems) {
	if len(s.NodeGroups) == 0 && catalogue != nil {
		def := defaultNodeGroup()
		lookupInstanceType(defaultNodeGroupName, "spec.nodeGroups."+defaultNodeGroupName, def, catalogue, ps)
	}
	for _, name := range slices.Sorted(maps.Keys(s.NodeGroups)) {
		g := s.NodeGroups[name]
		f := "spec.nodeGroups." + name
		nodeGroupWarnings(name, f, g, ws)
		cpu, mem := g.Resources.CPU != nil, g.Resources.Memory != nil
		if cpu != mem {
			detail := fmt.Sprintf("nodeGroup %s: set both resources.cpu and resources.memory, or neither", name)
			if g.InstanceType != "" {
				ps.add(f+".resources", tNodeGroupResourcesPair, detail)
			} else {
				ws.add(f+".resources", kResourcesPair,
					detail+" (the chart accepts it without an instanceType)")
			}
		}
		podCPUProblems(name, f, g, ps)
		it, found := lookupInstanceType(name, f, g, catalogue, ps)
		if g.InstanceType != "" && !g.sizedByResources() && catalogue != nil && !found {
			continue // the chart fails at the lookup, before the kubelet rules
		}
		kubeletProblems(name, f, g, sizeOf(g, it, found), ps)
	}
}

// nodeGroupWarnings reports what the chart accepts but is almost
// certainly a mistake.
func nodeGroupWarnings(name, f string, g NodeGroup, ws *problems) {
	maxReplicas := defaultMaxReplicas
	if g.MaxReplicas != nil {
		maxReplicas = *g.MaxReplicas
	}
	if g.MinReplicas < 0 {
		ws.add(f+".minReplicas", kMinReplicasNegative, fmt.Sprintf("%d", g.MinReplicas))
	}
	if maxReplicas < g.MinReplicas {
		ws.add(f+".maxReplicas", kMaxReplicasBelowMin,
			fmt.Sprintf("%d is below minReplicas %d", maxReplicas, g.MinReplicas))
	}
	for i, gpu := range g.GPUs {
		if gpu.Name == "" {
			ws.add(fmt.Sprintf("%s.gpus[%d].name", f, i), kGPUNameEmpty, "no device name")
		}
	}
	if g.InstanceType == "" && g.Resources.CPU == nil && g.Resources.Memory == nil {
		ws.add(f+".instanceType", kNodeGroupUnsized,
			fmt.Sprintf("nodeGroup %s: the VMs get no instance type and no explicit size; set instanceType or both resources.cpu and resources.memory", name))
	}
}

// podCPUProblems checks podCpuLimit and podCpuRequest. Presence counts,
// not truth: a 0 is set.
func podCPUProblems(name, f string, g NodeGroup, ps *problems) {
	limit, request := g.PodCPULimit, g.PodCPURequest
	if g.InstanceType != "" && !g.sizedByResources() {
		for _, p := range []struct {
			key, where string
			rule       ruleID
			set        bool
		}{
			{"podCpuLimit", "limits", tPodCPULimitInstanceType, limit != nil},
			{"podCpuRequest", "requests", tPodCPURequestInstanceType, request != nil},
		} {
			if p.set {
				ps.add(f+"."+p.key, p.rule, fmt.Sprintf(
					"nodeGroup %s: %s cannot be combined with instanceType sizing, because KubeVirt rejects a VirtualMachine that references an instancetype and also sets domain.resources.%s.cpu. Set both resources.cpu and resources.memory, which drops the instancetype from the VM, or drop %s.",
					name, p.key, p.where, p.key))
			}
		}
	}
	if limit != nil && limit.Sign() < 0 {
		ps.add(f+".podCpuLimit", tPodCPULimitNegative,
			fmt.Sprintf("nodeGroup %s: podCpuLimit (%s) must not be negative", name, limit))
	}
	if request != nil && request.Sign() < 0 {
		ps.add(f+".podCpuRequest", tPodCPURequestNegative,
			fmt.Sprintf("nodeGroup %s: podCpuRequest (%s) must not be negative", name, request))
	}
	if limit != nil && request == nil && limit.IsZero() {
		ps.add(f+".podCpuLimit", tPodCPULimitZeroAlone, fmt.Sprintf(
			"nodeGroup %s: podCpuLimit 0 needs podCpuRequest 0 beside it. A zero limit removes the ceiling, but KubeVirt still derives a CPU request from the guest vCPU count when the VM declares none, and a request above a declared limit of zero is rejected when the worker's Pod is created.", name))
	}
	if limit == nil || request == nil {
		return
	}
	if request.IsZero() && !limit.IsZero() {
		ps.add(f+".podCpuRequest", tPodCPURequestZeroWithLimit, fmt.Sprintf(
			"nodeGroup %s: podCpuRequest 0 beside a podCpuLimit does not reserve nothing. KubeVirt replaces a zero CPU request with the declared limit (%s), so the worker would ask the scheduler for its whole ceiling, which is what podCpuRequest exists to prevent. Give podCpuRequest a non-zero value, or drop it and accept the same outcome deliberately.", name, limit))
	}
	if request.Cmp(*limit) > 0 {
		ps.add(f+".podCpuRequest", tPodCPURequestAboveLimit, fmt.Sprintf(
			"nodeGroup %s: podCpuRequest (%s) exceeds podCpuLimit (%s), and a container cannot request more CPU than its limit", name, request, limit))
	}
}
