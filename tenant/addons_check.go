package tenant

import (
	"fmt"
	"slices"
	"strings"
)

func (s KubernetesSpec) validateAddons(ps *problems) {
	a := s.Addons
	if a.HAMi.Enabled && !a.GPUOperator.Enabled {
		ps.add("spec.addons.hami.enabled", tHAMiGPUOperator,
			"addons.hami requires addons.gpuOperator to be enabled")
	}
	if a.Ouroboros.Enabled && !a.IngressNginx.Enabled {
		ps.add("spec.addons.ouroboros.enabled", tOuroborosIngress,
			"addons.ouroboros.enabled requires addons.ingressNginx.enabled — ouroboros is a hairpin-NAT fix for tenant ingress-nginx and has nothing to fix against without it.")
	}
	if ouroborosGatewayAPI(a.Ouroboros.ValuesOverride) && !a.GatewayAPI.Enabled {
		ps.add("spec.addons.ouroboros.valuesOverride.ouroboros.controller.gatewayApi.enabled", tOuroborosGatewayAPI,
			"addons.ouroboros.valuesOverride.ouroboros.controller.gatewayApi.enabled=true requires addons.gatewayAPI.enabled=true on the same tenant — Gateway-API CRDs would otherwise be missing and the controller would CrashLoopBackOff on WaitForCacheSync. Either enable addons.gatewayAPI for the tenant, or drop the override and let the wrapper mirror the tenant value.")
	}
	switch a.IngressNginx.ExposeMethod {
	case "", Proxied, LoadBalancer:
	default:
		ps.add("spec.addons.ingressNginx.exposeMethod", sIngressExposeMethodEnum,
			fmt.Sprintf("%q is not one of Proxied, LoadBalancer", a.IngressNginx.ExposeMethod))
	}
}

// ouroborosGatewayAPI reports whether ouroboros's values override turns
// its Gateway API controller on, read as the chart reads it: the key
// ouroboros.controller.gatewayApi.enabled, as a lower-case string, is one
// of true, 1, yes, on, y.
func ouroborosGatewayAPI(values map[string]any) bool {
	var v any = values
	for _, k := range []string{"ouroboros", "controller", "gatewayApi"} {
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		v = m[k]
	}
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	enabled, ok := m["enabled"]
	if !ok || enabled == nil {
		return false
	}
	return slices.Contains([]string{"true", "1", "yes", "on", "y"}, strings.ToLower(fmt.Sprint(enabled)))
}
