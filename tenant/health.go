package tenant

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// Defaults of the node health check and the autoscaler.
const (
	defaultMaxUnhealthy         = "50%"
	defaultNodeStartupTimeout   = "20m"
	defaultReadyUnknownTimeout  = "5m"
	defaultReadyFalseTimeout    = "10m"
	defaultMaxNodeProvisionTime = "30m"
)

var (
	maxUnhealthyCount   = regexp.MustCompile(`^[0-9]+$`)
	maxUnhealthyPercent = regexp.MustCompile(`^[0-9]+%$`)
	// positiveDuration is the chart's duration form: up to three segments
	// of whole s, m or h, the first positive and at most 5 digits.
	positiveDuration = regexp.MustCompile(`^[1-9][0-9]{0,4}[smh]([0-9]{1,5}[smh]){0,2}$`)
)

// validateHealth checks the MachineHealthCheck and autoscaler settings the
// chart renders for every node group (md0 included when there are none):
// each group's effective maxUnhealthy and the three durations.
func (s KubernetesSpec) validateHealth(ps *problems) {
	h := s.NodeHealthCheck
	cluster := orDefault(h.MaxUnhealthy, defaultMaxUnhealthy)
	ps.addFE(maxUnhealthyProblem("spec.nodeHealthCheck.maxUnhealthy", cluster))
	groups := s.effectiveNodeGroups()
	for _, name := range slices.Sorted(maps.Keys(groups)) {
		if v := groups[name].MaxUnhealthy; v != "" {
			ps.addFE(maxUnhealthyProblem("spec.nodeGroups."+name+".maxUnhealthy", v))
		}
	}
	for _, d := range []struct{ field, value, def string }{
		{"spec.nodeHealthCheck.readyUnknownTimeout", h.ReadyUnknownTimeout, defaultReadyUnknownTimeout},
		{"spec.nodeHealthCheck.readyFalseTimeout", h.ReadyFalseTimeout, defaultReadyFalseTimeout},
		{"spec.maxNodeProvisionTime", s.MaxNodeProvisionTime, defaultMaxNodeProvisionTime},
	} {
		ps.addFE(durationProblem(d.field, orDefault(d.value, d.def)))
	}
}

// maxUnhealthyProblem refuses a maxUnhealthy that is neither a bare
// integer nor an integer percentage, with the chart's message.
func maxUnhealthyProblem(field, v string) *FieldError {
	if strings.HasSuffix(v, "%") && maxUnhealthyPercent.MatchString(v) || !strings.HasSuffix(v, "%") && maxUnhealthyCount.MatchString(v) {
		return nil
	}
	return problem(field, tMaxUnhealthyFormat, fmt.Sprintf("maxUnhealthy must be a bare integer (e.g. 0, 1) or an integer percentage (e.g. 50%%), got %q", v))
}

// durationProblem refuses a duration outside the chart's form, with the
// chart's message.
func durationProblem(field, v string) *FieldError {
	if positiveDuration.MatchString(v) {
		return nil
	}
	name := field[strings.LastIndexByte(field, '.')+1:]
	return problem(field, tDurationPositive, fmt.Sprintf("%s must be a whole number of s, m or h (e.g. 30m, 1h30m), got %q", name, v))
}
