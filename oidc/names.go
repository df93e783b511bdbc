package oidc

import (
	"fmt"
	"strings"

	"github.com/cozystack/tenantkit/ref"
)

// Names of the platform's Keycloak realm. Every name of a tenant cluster
// (client ID, audience scope, Secrets, tenant groups) is derived by
// package ref.
const (
	// systemRealm is the platform Keycloak realm that System mode trusts.
	systemRealm = "cozy"
	// systemRealmRef is the ClusterKeycloakRealm of the platform realm, the
	// realmRef of the Keycloak objects.
	systemRealmRef = "keycloakrealm-cozy"
)

// SystemIssuerURL returns the issuer of the platform Keycloak realm for a
// Cozystack installation with the given root host:
// "https://keycloak.<rootHost>/realms/cozy".
func SystemIssuerURL(rootHost string) string {
	return "https://keycloak." + rootHost + "/realms/" + systemRealm
}

// TenantGroupsGate returns the CEL claim validation rule that admits only
// members of c's tenant groups (ref.Cluster.TenantGroups), in the chart's
// exact text (its kubernetes.oidc.groupsClaimValidationExpr helper): the
// list items separated by ", ". It guards with has() and dyn() because
// the apiserver types claims as dyn and refuses a bare
// claims.groups.exists().
func TenantGroupsGate(c ref.Cluster) string {
	quoted := make([]string, 0, 4)
	for _, g := range c.TenantGroups() {
		quoted = append(quoted, fmt.Sprintf("%q", g))
	}
	return "has(claims.groups) && dyn(claims.groups).exists(g, g in [" + strings.Join(quoted, ", ") + "])"
}

// tenantGroupsMessage returns the message of the tenant groups rule, the
// chart's text: the reason kube-apiserver logs when it refuses a token of
// a user outside the tenant groups.
func tenantGroupsMessage(c ref.Cluster) string {
	return "user is not a member of any " + c.Namespace + "-{view,use,admin,super-admin} group in the " + systemRealm +
		" realm — this tenant's apiserver only trusts identities the tenant chart has admitted"
}

// checkCluster checks that both names of c are set.
func checkCluster(c ref.Cluster) error {
	if c.Namespace == "" || c.Name == "" {
		return invalidf("cluster needs a namespace and a name (got %q)", c.String())
	}
	return nil
}

// labels returns the labels of the objects rendered for c.
// The chart's Helm labels (kubernetes.labels in templates/_helpers.tpl at
// cozystack 3c780ac), on the Secrets it renders: helm.sh/chart is
// "kubernetes-<chart version>", app.kubernetes.io/version the chart's
// appVersion.
const (
	labelHelmChart    = "helm.sh/chart"
	labelName         = "app.kubernetes.io/name"
	labelVersion      = "app.kubernetes.io/version"
	managedByHelm     = "Helm"
	chartName         = "kubernetes"
	chartAppVersion   = "1.32.6"
	chartVersionUnset = "0.0.0"
)

// ChartLabels returns the labels the chart puts on the Secrets it renders
// for cluster c (kubernetes.labels): helm.sh/chart kubernetes-<version>,
// app.kubernetes.io/name kubernetes, app.kubernetes.io/instance the
// release, app.kubernetes.io/version the chart's appVersion (1.32.6) and
// app.kubernetes.io/managed-by Helm. chartVersion is the installed
// chart's version, which Cozystack's build writes into Chart.yaml; ""
// means the source's placeholder, 0.0.0.
func ChartLabels(c ref.Cluster, chartVersion string) map[string]string {
	if chartVersion == "" {
		chartVersion = chartVersionUnset
	}
	chart := strings.TrimSuffix(truncate(strings.ReplaceAll(chartName+"-"+chartVersion, "+", "_"), 63), "-")
	return map[string]string{
		labelHelmChart: chart,
		labelName:      chartName,
		labelInstance:  c.Release(),
		labelVersion:   chartAppVersion,
		labelManagedBy: managedByHelm,
	}
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func labels(c ref.Cluster) map[string]string {
	return map[string]string{labelManagedBy: managedByValue, labelInstance: c.Release()}
}
