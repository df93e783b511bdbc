package etcdlayout

import "fmt"

// Names of the objects of a tenant etcd, as Cozystack ≤ v1.5 (aenix
// etcd-operator v0.4.5, EtcdCluster "etcd") lays them out.
const (
	// clusterName is the EtcdCluster's name; Cozystack always names it etcd.
	clusterName = "etcd"
	// StatefulSetName is the StatefulSet running the members.
	StatefulSetName = "etcd"
	// headlessService is the headless Service that gives every member its
	// DNS name (publishNotReadyAddresses: true).
	headlessService = "etcd-headless"
	// clientService is the Service clients use (ready members only).
	clientService = "etcd"
	// ClusterStateConfigMap holds ETCD_INITIAL_CLUSTER_STATE,
	// ETCD_INITIAL_CLUSTER and ETCD_INITIAL_CLUSTER_TOKEN, loaded by every
	// member through envFrom.
	ClusterStateConfigMap = "etcd-cluster-state"
	// podDisruptionBudget is the PDB keeping a quorum available.
	podDisruptionBudget = "etcd"
	// VolumeClaimTemplate is the StatefulSet's claim template, so claims
	// are named data-etcd-<i>.
	VolumeClaimTemplate = "data"
)

// TLS Secrets (cert-manager layout: tls.crt, tls.key, ca.crt).
const (
	// SecretCA is the CA of server and client certificates.
	SecretCA = "etcd-ca-tls"
	// SecretPeerCA is the CA of peer certificates.
	SecretPeerCA = "etcd-peer-ca-tls"
	// SecretServer is the members' serving certificate.
	SecretServer = "etcd-server-tls"
	// SecretPeer is the members' peer certificate (server and client auth).
	SecretPeer = "etcd-peer-tls"
	// SecretClient is the client certificate, CN root.
	SecretClient = "etcd-client-tls"
)

// Ports of every member.
const (
	clientPort  = 2379
	peerPort    = 2380
	metricsPort = 2381
)

// Labels of the members' pods (the StatefulSet selector plus Cozystack's
// service label).
var podLabels = map[string]string{
	"app.kubernetes.io/name":       "etcd",
	"app.kubernetes.io/instance":   clusterName,
	"app.kubernetes.io/managed-by": "etcd-operator",
	"cozystack.io/service":         "etcd",
}

// selectorLabels are the operator's selector labels (podLabels without
// Cozystack's).
func selectorLabels() map[string]string {
	return map[string]string{
		"app.kubernetes.io/name":       "etcd",
		"app.kubernetes.io/instance":   clusterName,
		"app.kubernetes.io/managed-by": "etcd-operator",
	}
}

// Namespace returns the namespace of a root tenant's etcd: tenant-<name>.
func Namespace(tenant string) string { return "tenant-" + tenant }

// PodName returns the name of member i's pod, also its etcd member name:
// etcd-<i>.
func PodName(i int) string { return fmt.Sprintf("%s-%d", StatefulSetName, i) }

// PVCName returns the name of member i's claim: data-etcd-<i>.
func PVCName(i int) string { return VolumeClaimTemplate + "-" + PodName(i) }

// StatefulSetHost returns the DNS name of the v1alpha1 (StatefulSet)
// member i: etcd-<i>.etcd-headless.<ns>.svc.
func StatefulSetHost(namespace string, i int) string {
	return fmt.Sprintf("%s.%s.%s.svc", PodName(i), headlessService, namespace)
}

// StatefulSetPeerURL returns the peer URL of the v1alpha1 (StatefulSet)
// member i exactly as the operator advertises it:
// https://etcd-<i>.etcd-headless.<ns>.svc:2380.
func StatefulSetPeerURL(namespace string, i int) string {
	return fmt.Sprintf("https://%s:%d", StatefulSetHost(namespace, i), peerPort)
}

// statefulSetClientURL returns the advertised client URL of the v1alpha1
// (StatefulSet) member i: https://etcd-<i>.etcd-headless.<ns>.svc:2379.
func statefulSetClientURL(namespace string, i int) string {
	return fmt.Sprintf("https://%s:%d", StatefulSetHost(namespace, i), clientPort)
}

// clusterToken returns the initial cluster token, etcd-<ns>.
func clusterToken(namespace string) string { return clusterName + "-" + namespace }
