package etcdlayout

import (
	"fmt"
	"math"
	"net"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/cozystack/tenantkit/localenv/pki"
)

// defaultImage is the etcd image of the aenix operator v0.4.5, which
// Cozystack ≤ v1.5 runs. The simulated nodes run the environment's etcd
// v3.7.3 binary whatever the image says.
const defaultImage = "quay.io/coreos/etcd:v3.5.12"

// Config describes a tenant etcd. The zero value is invalid: set Tenant or
// Namespace.
type Config struct {
	// Tenant is the tenant's name; the namespace is tenant-<Tenant>.
	Tenant string
	// Namespace overrides the namespace, for nested tenants
	// (<parent-ns>-<name>).
	Namespace string
	// Replicas is the number of members. Default 3.
	Replicas int32
	// Size is each member's volume request. Default 1Gi (Cozystack's
	// default is 4Gi). The quota is 95% of it, as the operator computes.
	Size resource.Quantity
	// StorageClass is the claims' class; empty means the default class.
	StorageClass string
	// Image is the etcd image written into the pod template. Default
	// defaultImage.
	Image string
	// StrictSpread makes the members' topology spread over
	// kubernetes.io/hostname a hard constraint (whenUnsatisfiable:
	// DoNotSchedule) instead of Cozystack's default ScheduleAnyway, under
	// which two members may share a node. Cozystack installations can set
	// this through their global topology spread constraints; tests use it
	// when they need one member per node. Cordoned nodes count as spread
	// domains, so a member cannot move onto a node that already has one
	// while another node is cordoned and empty.
	StrictSpread bool
	// DeletionGuard (v1alpha2 only) makes StartV1alpha2 install the
	// operator chart's member deletion guard (InstallMemberDeletionGuard)
	// on the environment's kube-apiserver and run the stand-in operator as
	// OperatorUser, the only identity (besides the garbage collector and
	// the namespace controller) the guard lets delete an EtcdMember.
	DeletionGuard bool
}

func (cfg Config) withDefaults() (Config, error) {
	if cfg.Namespace == "" {
		if cfg.Tenant == "" {
			return cfg, fmt.Errorf("%w: set Tenant or Namespace", ErrInvalidConfig)
		}
		cfg.Namespace = Namespace(cfg.Tenant)
	}
	if cfg.Replicas == 0 {
		cfg.Replicas = 3
	}
	if cfg.Replicas < 1 {
		return cfg, fmt.Errorf("%w: Replicas is %d", ErrInvalidConfig, cfg.Replicas)
	}
	if cfg.Size.IsZero() {
		cfg.Size = resource.MustParse("1Gi")
	}
	if cfg.Image == "" {
		cfg.Image = defaultImage
	}
	return cfg, nil
}

// V1alpha1 is a tenant etcd laid out as Cozystack ≤ v1.5 does it: the
// objects the aenix etcd-operator v0.4.5 generates from the chart's
// EtcdCluster (etcd.aenix.io/v1alpha1), plus the TLS Secrets cert-manager
// issues for the chart's Certificates. Build it with NewV1alpha1, create it
// with Apply. Everything is a plain value: print it for a dry run.
type V1alpha1 struct {
	// Config is the configuration with defaults applied.
	Config Config
	// Namespace is the tenant namespace.
	Namespace *corev1.Namespace
	// Secrets are the five TLS Secrets (etcd-ca-tls, etcd-peer-ca-tls,
	// etcd-server-tls, etcd-peer-tls, etcd-client-tls).
	Secrets []*corev1.Secret
	// ClusterState is the etcd-cluster-state ConfigMap, state "new".
	ClusterState *corev1.ConfigMap
	// Headless and Client are the etcd-headless and etcd Services.
	Headless, Client *corev1.Service
	// PDB keeps a quorum of members available.
	PDB *policyv1.PodDisruptionBudget
	// StatefulSet runs the members.
	StatefulSet *appsv1.StatefulSet
}

// NewV1alpha1 builds the layout, generating fresh CAs and certificates
// whose subject alternative names are the chart's: etcd, etcd.<ns>.svc,
// etcd-<i>, etcd-<i>.etcd-headless, etcd-<i>.etcd-headless.<ns>.svc for
// every i < replicas, localhost and 127.0.0.1.
func NewV1alpha1(cfg Config) (*V1alpha1, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	ns := cfg.Namespace
	l := &V1alpha1{Config: cfg, Namespace: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}}
	if l.Secrets, err = chartSecrets(ns, enumeratedSANs(ns, cfg.Replicas)); err != nil {
		return nil, err
	}
	l.ClusterState = clusterStateConfigMap(ns, cfg.Replicas, "new")
	l.Headless, l.Client = services(ns)
	quorum := intstr.FromInt32(cfg.Replicas/2 + 1)
	l.PDB = &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: podDisruptionBudget, Namespace: ns},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable:               &quorum,
			Selector:                   &metav1.LabelSelector{MatchLabels: selectorLabels()},
			UnhealthyPodEvictionPolicy: new(policyv1.IfHealthyBudget),
		},
	}
	l.StatefulSet = statefulSet(cfg)
	return l, nil
}

// enumeratedSANs are the server and peer certificates' DNS names in
// Cozystack ≤ v1.5: every ordinal below replicas, by name.
func enumeratedSANs(ns string, replicas int32) []string {
	sans := []string{clusterName, clusterName + "." + ns + ".svc"}
	for i := range int(replicas) {
		sans = append(sans, PodName(i), PodName(i)+"."+headlessService, StatefulSetHost(ns, i))
	}
	return append(sans, "localhost")
}

// chartSecrets issues the chart's five certificates; server and peer
// certificates get the DNS names sans and the IP 127.0.0.1.
func chartSecrets(ns string, sans []string) ([]*corev1.Secret, error) {
	ca, err := newIssuer("etcd-ca", ns)
	if err != nil {
		return nil, err
	}
	peerCA, err := newIssuer("etcd-peer-ca", ns)
	if err != nil {
		return nil, err
	}
	ips := []net.IP{net.IPv4(127, 0, 0, 1)}
	server, err := issue(ca, "etcd-server", ns, sans, ips, pki.ServerAndClient)
	if err != nil {
		return nil, err
	}
	peer, err := issue(peerCA, "etcd-peer", ns, sans, ips, pki.ServerAndClient)
	if err != nil {
		return nil, err
	}
	client, err := issue(ca, "root", ns, nil, nil, pki.Client)
	if err != nil {
		return nil, err
	}
	secret := func(name string, data map[string][]byte) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Type: corev1.SecretTypeTLS, Data: data}
	}
	// A self-signed CA's ca.crt is itself, as cert-manager writes it.
	return []*corev1.Secret{
		secret(SecretCA, tlsSecretData(ca.CertPEM, ca.KeyPEM, ca.CertPEM)),
		secret(SecretPeerCA, tlsSecretData(peerCA.CertPEM, peerCA.KeyPEM, peerCA.CertPEM)),
		secret(SecretServer, server), secret(SecretPeer, peer), secret(SecretClient, client),
	}, nil
}

// clusterStateConfigMap is the operator's etcd-cluster-state ConfigMap.
func clusterStateConfigMap(ns string, replicas int32, state string) *corev1.ConfigMap {
	var members []string
	for i := range int(replicas) {
		members = append(members, PodName(i)+"="+StatefulSetPeerURL(ns, i))
	}
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: ClusterStateConfigMap, Namespace: ns},
		Data: map[string]string{
			"ETCD_INITIAL_CLUSTER_STATE": state,
			"ETCD_INITIAL_CLUSTER":       strings.Join(members, ","),
			"ETCD_INITIAL_CLUSTER_TOKEN": clusterToken(ns),
		},
	}
}

func services(ns string) (headless, client *corev1.Service) {
	meta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: ns, Labels: selectorLabels()}
	}
	port := func(name string, p int32) corev1.ServicePort {
		return corev1.ServicePort{Name: name, Port: p, TargetPort: intstr.FromInt32(p), Protocol: corev1.ProtocolTCP}
	}
	headless = &corev1.Service{ObjectMeta: meta(headlessService), Spec: corev1.ServiceSpec{
		Type: corev1.ServiceTypeClusterIP, ClusterIP: corev1.ClusterIPNone, PublishNotReadyAddresses: true,
		Selector: selectorLabels(), Ports: []corev1.ServicePort{port("peer", peerPort), port("client", clientPort)},
	}}
	client = &corev1.Service{ObjectMeta: meta(clientService), Spec: corev1.ServiceSpec{
		Type: corev1.ServiceTypeClusterIP, Selector: selectorLabels(),
		Ports: []corev1.ServicePort{port("client", clientPort), port("metrics", metricsPort)},
	}}
	return headless, client
}

// etcdArgs are the operator's etcd arguments for a cluster with peer,
// server and client TLS Secrets, followed by the chart's options (sorted,
// as the operator sorts them).
func etcdArgs(cfg Config) []string {
	args := []string{
		"--name=$(POD_NAME)",
		"--listen-metrics-urls=http://0.0.0.0:2381",
		"--listen-peer-urls=https://0.0.0.0:2380",
		"--listen-client-urls=https://0.0.0.0:2379",
		"--initial-advertise-peer-urls=https://$(POD_NAME).etcd-headless.$(POD_NAMESPACE).svc:2380",
		"--data-dir=/var/run/etcd/default.etcd",
		"--advertise-client-urls=https://$(POD_NAME).etcd-headless.$(POD_NAMESPACE).svc:2379",
		"--peer-trusted-ca-file=/etc/etcd/pki/peer/ca/ca.crt",
		"--peer-cert-file=/etc/etcd/pki/peer/cert/tls.crt",
		"--peer-key-file=/etc/etcd/pki/peer/cert/tls.key",
		"--peer-client-cert-auth",
		"--cert-file=/etc/etcd/pki/server/cert/tls.crt",
		"--key-file=/etc/etcd/pki/server/cert/tls.key",
		"--trusted-ca-file=/etc/etcd/pki/client/ca/ca.crt",
		"--client-cert-auth",
		"--auto-compaction-retention=5m",
		"--snapshot-count=10000",
	}
	quota := int64(math.Floor(float64(cfg.Size.Value()) * 0.95))
	options := []string{
		"--quota-backend-bytes=" + strconv.FormatInt(quota, 10),
		"--auto-compaction-mode=periodic",
		"--auto-compaction-retention=5m",
		"--snapshot-count=10000",
	}
	slices.Sort(options)
	return append(args, options...)
}
