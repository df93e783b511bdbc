package tenant

import (
	"fmt"

	"sigs.k8s.io/yaml"
)

// customConfigProblems looks at the shape of an inline custom
// AuthenticationConfiguration. The chart stores the text verbatim and
// never reads it; but the cluster's kube-apiserver refuses to start with a
// file that is not an AuthenticationConfiguration, or of an API version
// its Kubernetes version does not load, so these are tenantkit's errors
// (K-customconfig-parse, K-authn-version; ValidationError.By without
// DecidedByTenantkit is the chart's verdict). Package oidc's renderer
// validates the whole configuration as kube-apiserver does.
func (s KubernetesSpec) customConfigProblems(ws *problems) {
	const f = "spec.oidc.customConfig.config"
	var doc map[string]any
	if err := yaml.Unmarshal([]byte(s.OIDC.CustomConfig.Config), &doc); err != nil || doc == nil {
		ws.add(f, kCustomConfigParse, "not a YAML mapping: the cluster's kube-apiserver will refuse to start with it")
		return
	}
	kind, _ := doc["kind"].(string)
	apiVersion, _ := doc["apiVersion"].(string)
	if _, known := authnConfigSince[apiVersion]; !known || kind != "AuthenticationConfiguration" {
		ws.add(f, kCustomConfigParse, fmt.Sprintf(
			"apiVersion %q, kind %q: want an apiserver.config.k8s.io AuthenticationConfiguration; the cluster's kube-apiserver will refuse to start with it", apiVersion, kind))
		return
	}
	kv := string(orDefault(s.Version, DefaultVersion))
	if loads, err := AuthenticationConfigLoads(kv, apiVersion); err == nil && !loads {
		ws.add(f, kAuthnVersion, fmt.Sprintf(
			"Kubernetes %s does not load %s (it is loaded from 1.%d): the cluster's kube-apiserver will refuse to start with it — use %s",
			kv, apiVersion, authnConfigSince[apiVersion], AuthenticationConfigV1Beta1))
	}
}
