package tenant

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// The Secret through which Cozystack hands every application of a tenant
// namespace its platform (_cluster) and tenant (_namespace) values.
const (
	// ValuesSecret is the Secret's name in each tenant namespace.
	ValuesSecret = "cozystack-values"
	// ValuesSecretKey is its key.
	ValuesSecretKey = "values.yaml"
)

// Platform is what the chart reads about the Cozystack installation (its
// _cluster values).
type Platform struct {
	// RootHost is the platform's root domain (_cluster.root-host); the
	// System OIDC issuer is https://keycloak.<RootHost>/realms/cozy.
	RootHost string
	// OIDCEnabled is the platform flag authentication.oidc.enabled
	// (_cluster.oidc-enabled); OIDC mode System needs it.
	OIDCEnabled bool
	// ClusterDomain is the management cluster's DNS domain
	// (_cluster.cluster-domain), such as "cozy.local".
	ClusterDomain string
	// Release is the Cozystack release whose chart Check mirrors; zero is
	// LatestRelease. ParseValues leaves it zero: the values Secret does not
	// say.
	Release Release
	// InstanceTypes is the catalogue of the management cluster's
	// VirtualMachineClusterInstancetypes by name, for the rules the chart
	// decides by a lookup (an instanceType that does not exist, kubelet
	// reservations against an instance type's size). Nil leaves them
	// undecided; DefaultInstanceTypes is Cozystack's default catalogue.
	InstanceTypes map[string]InstanceType
}

// valuesDoc is the document under ValuesSecretKey.
type valuesDoc struct {
	Cluster   map[string]any `json:"_cluster"`
	Namespace Services       `json:"_namespace"`
}

// ParseValues reads the platform and the namespace's services from the
// content of a cozystack-values Secret (key values.yaml). Keys it does not
// model are ignored: the Secret carries many platform settings.
func ParseValues(data []byte) (Platform, Services, error) {
	var doc valuesDoc
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return Platform{}, Services{}, fmt.Errorf("%w: %s: %w", ErrMalformed, ValuesSecret, err)
	}
	str := func(k string) string {
		switch v := doc.Cluster[k].(type) {
		case string:
			return v
		case bool:
			return strconv.FormatBool(v)
		}
		return ""
	}
	p := Platform{RootHost: str("root-host"), OIDCEnabled: str("oidc-enabled") == "true", ClusterDomain: str("cluster-domain")}
	return p, doc.Namespace, nil
}

// ValuesSecretFor renders the cozystack-values Secret of namespace ns the
// way the tenant chart does, from the platform and the namespace's
// services. Package tenanttest uses it to fake a tenant namespace.
func ValuesSecretFor(ns string, p Platform, s Services) (*corev1.Secret, error) {
	cluster := map[string]any{"root-host": p.RootHost, "oidc-enabled": strconv.FormatBool(p.OIDCEnabled)}
	if p.ClusterDomain != "" {
		cluster["cluster-domain"] = p.ClusterDomain
	}
	doc := map[string]any{"_cluster": cluster, "_namespace": map[string]string{
		"etcd": s.Etcd, "ingress": s.Ingress, "gateway": s.Gateway, "monitoring": s.Monitoring,
		"seaweedfs": s.SeaweedFS, "host": s.Host,
	}}
	if s.SchedulingClass != "" {
		doc["_namespace"].(map[string]string)["schedulingClass"] = s.SchedulingClass
	}
	data, err := yaml.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", ValuesSecret, err)
	}
	return &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: ValuesSecret, Namespace: ns,
			Labels: map[string]string{"reconcile.fluxcd.io/watch": "Enabled"}},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{ValuesSecretKey: data},
	}, nil
}
