package tenant

import (
	"fmt"
	"maps"

	"k8s.io/apimachinery/pkg/api/resource"
)

// InstanceType is what the chart reads of a KubeVirt
// VirtualMachineClusterInstancetype: its guest size (spec.cpu.guest,
// spec.memory.guest).
type InstanceType struct {
	// CPU is the number of guest vCPUs.
	CPU int64
	// Memory is the guest memory.
	Memory resource.Quantity
}

// DefaultInstanceTypes returns Cozystack's default catalogue of the u1.*
// series (packages/system/kubevirt-instancetypes, templates/
// instancetypes.yaml at cozystack 3c780ac): the instance types the chart's
// default node group and most clusters use. Pass it, or the management
// cluster's own catalogue, as Platform.InstanceTypes to have Check decide
// the rules the chart decides by a lookup.
func DefaultInstanceTypes() map[string]InstanceType {
	return maps.Clone(u1Series)
}

var u1Series = map[string]InstanceType{
	"u1.nano":     {CPU: 1, Memory: resource.MustParse("512Mi")},
	"u1.micro":    {CPU: 1, Memory: resource.MustParse("1Gi")},
	"u1.small":    {CPU: 1, Memory: resource.MustParse("2Gi")},
	"u1.medium":   {CPU: 1, Memory: resource.MustParse("4Gi")},
	"u1.2xmedium": {CPU: 2, Memory: resource.MustParse("4Gi")},
	"u1.large":    {CPU: 2, Memory: resource.MustParse("8Gi")},
	"u1.xlarge":   {CPU: 4, Memory: resource.MustParse("16Gi")},
	"u1.2xlarge":  {CPU: 8, Memory: resource.MustParse("32Gi")},
	"u1.4xlarge":  {CPU: 16, Memory: resource.MustParse("64Gi")},
	"u1.8xlarge":  {CPU: 32, Memory: resource.MustParse("128Gi")},
}

// lookupInstanceType resolves a node group's instance type as the chart's
// lookup does, when the group is sized by it (an instanceType, not both
// resources.cpu and resources.memory). It returns the type and true when
// the catalogue has it; without a catalogue it decides nothing (false, no
// problem); a name the catalogue lacks is the chart's refusal
// (T-instancetype-lookup).
func lookupInstanceType(name, f string, g NodeGroup, catalogue map[string]InstanceType, ps *problems) (InstanceType, bool) {
	if g.InstanceType == "" || g.sizedByResources() || catalogue == nil {
		return InstanceType{}, false
	}
	it, ok := catalogue[g.InstanceType]
	if !ok {
		ps.add(f+".instanceType", tInstanceTypeLookup, fmt.Sprintf(
			"nodeGroup %s: specified instanceType %q not found in cluster", name, g.InstanceType))
	}
	return it, ok
}
