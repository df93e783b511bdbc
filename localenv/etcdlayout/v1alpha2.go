package etcdlayout

import (
	"context"
	"fmt"

	"github.com/cozystack/tenantkit/internal/crds"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
)

// Labels, finalizer and defaults of the v1alpha2 layout (Cozystack ≥ v1.6,
// cozystack etcd-operator v0.5).
const (
	// labelCluster is on every member's Pod and PVC: the cluster name.
	labelCluster = "etcd-operator.cozystack.io/cluster"
	// labelRole is role=voter on voters' Pods only; the PDB selects it.
	labelRole = "etcd-operator.cozystack.io/role"
	// roleVoter is labelRole's only value.
	roleVoter = "voter"
	// memberFinalizer is on every EtcdMember; it runs MemberRemove before
	// the member's Pod and PVC go.
	memberFinalizer = "etcd-operator.cozystack.io/member-cleanup"
	// defaultVersion is the etcd version Cozystack v1.6 deploys.
	defaultVersion = "3.6.11"
)

// MemberHost returns a v1alpha2 member's DNS name: members are named
// etcd-<random> and resolve under the headless Service named after the
// cluster, so <member>.etcd.<ns>.svc.
func MemberHost(namespace, member string) string {
	return fmt.Sprintf("%s.%s.%s.svc", member, clusterName, namespace)
}

// MemberPeerURL returns a v1alpha2 member's peer URL,
// https://<member>.etcd.<ns>.svc:2380.
func MemberPeerURL(namespace, member string) string {
	return fmt.Sprintf("https://%s:%d", MemberHost(namespace, member), peerPort)
}

// memberClientURL returns a v1alpha2 member's client URL,
// https://<member>.etcd.<ns>.svc:2379.
func memberClientURL(namespace, member string) string {
	return fmt.Sprintf("https://%s:%d", MemberHost(namespace, member), clientPort)
}

// V1alpha2 is a tenant etcd laid out as Cozystack ≥ v1.6 does it: an
// etcd-operator.cozystack.io/v1alpha2 EtcdCluster named etcd, the TLS
// Secrets of the chart (wildcard SANs *.etcd.<ns>.svc and
// *.etcd-headless.<ns>.svc), and nothing else: members, Pods, PVCs, the
// headless Service and the PDB come from the operator, here the stand-in
// Operator of this package.
type V1alpha2 struct {
	// Config is the configuration with defaults applied.
	Config Config
	// Namespace is the tenant namespace.
	Namespace *corev1.Namespace
	// Secrets are the chart's TLS Secrets (same names as in v1alpha1).
	Secrets []*corev1.Secret
	// Cluster is the EtcdCluster.
	Cluster *unstructured.Unstructured
}

// NewV1alpha2 builds the v1alpha2 layout with fresh certificates.
func NewV1alpha2(cfg Config) (*V1alpha2, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	ns := cfg.Namespace
	sans := []string{clusterName, clusterName + "." + ns + ".svc", "*." + clusterName + "." + ns + ".svc",
		"*." + headlessService + "." + ns + ".svc", "localhost"}
	secrets, err := chartSecrets(ns, sans)
	if err != nil {
		return nil, err
	}
	storage := map[string]any{"size": cfg.Size.String()}
	if cfg.StorageClass != "" {
		storage["storageClassName"] = cfg.StorageClass
	}
	quota := int64(float64(cfg.Size.Value()) * 0.95)
	cluster := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "etcd-operator.cozystack.io/v1alpha2",
		"kind":       "EtcdCluster",
		"metadata":   map[string]any{"name": clusterName, "namespace": ns},
		"spec": map[string]any{
			"replicas": int64(cfg.Replicas),
			"version":  defaultVersion,
			"storage":  storage,
			"options": map[string]any{
				"quotaBackendBytes": quota, "autoCompactionMode": "periodic",
				"autoCompactionRetention": "5m", "snapshotCount": int64(10000),
			},
			"additionalMetadata": map[string]any{"labels": map[string]any{"cozystack.io/service": "etcd"}},
			"topologySpreadConstraints": []any{map[string]any{
				"maxSkew": int64(1), "topologyKey": corev1.LabelHostname,
				"whenUnsatisfiable": string(spread(cfg.StrictSpread)[0].WhenUnsatisfiable),
				"labelSelector":     map[string]any{"matchLabels": map[string]any{"app.kubernetes.io/instance": clusterName}},
			}},
			"tls": map[string]any{
				"client": map[string]any{
					"serverSecretRef":         map[string]any{"name": SecretServer},
					"operatorClientSecretRef": map[string]any{"name": SecretClient},
				},
				"peer": map[string]any{"secretRef": map[string]any{"name": SecretPeer}},
			},
		},
	}}
	return &V1alpha2{Config: cfg, Namespace: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		Secrets: secrets, Cluster: cluster}, nil
}

// Apply installs the EtcdCluster and EtcdMember CRDs if missing and creates
// the namespace, the Secrets and the EtcdCluster. Existing objects are left
// alone. Nothing else happens until an operator (StartOperator) reconciles
// the EtcdCluster.
func (l *V1alpha2) Apply(ctx context.Context, rc *rest.Config) error {
	c, err := newClients(rc)
	if err != nil {
		return err
	}
	if err := crds.Install(ctx, rc, cozystackClusterCRD.Definition(), cozystackMemberCRD.Definition()); err != nil {
		return err
	}
	ns := l.Config.Namespace
	if err := createNamespace(ctx, c.kube, ns); err != nil {
		return err
	}
	for _, s := range l.Secrets {
		if _, err := c.kube.CoreV1().Secrets(ns).Create(ctx, s, metav1.CreateOptions{}); ignoreExists(err) != nil {
			return fmt.Errorf("create secret %s: %w", s.Name, err)
		}
	}
	_, err = c.dyn.Resource(etcdClusters).Namespace(ns).Create(ctx, l.Cluster, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create EtcdCluster: %w", err)
	}
	return nil
}
