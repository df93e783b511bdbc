package localenv

import (
	"github.com/cozystack/tenantkit/internal/pki"
	"github.com/cozystack/tenantkit/internal/process"
	"github.com/cozystack/tenantkit/localenv/internal/nodeagent"
)

// The types below are defined by the environment's internal machinery and
// named here so that programs using the environment can name them too.

// CA is the environment's certificate authority (Env.CA): its CertPEM
// field is the CA certificate, Pool returns it as a pool, Issue signs a
// key pair for a CertSpec, WriteCert writes the certificate to a file.
type CA = pki.CA

// CertSpec describes a certificate for CA.Issue: CommonName,
// Organization (groups, for a client certificate), DNSNames, IPs and
// Usage.
type CertSpec = pki.Spec

// KeyPair is a certificate and its key in PEM (CertPEM, KeyPEM), as
// CA.Issue returns them; WriteFiles and TLSCertificate use them.
type KeyPair = pki.KeyPair

// CertUsage is what a certificate of CA.Issue may be used for.
type CertUsage = pki.Usage

// The usages of CertSpec.Usage.
const (
	// ServerCert is a serving certificate (the zero value).
	ServerCert = pki.Server
	// ClientCert is a client certificate: its CommonName is the user,
	// its Organization the groups.
	ClientCert = pki.Client
	// ServerAndClientCert serves and authenticates, as etcd peers do.
	ServerAndClientCert = pki.ServerAndClient
)

// Process is a server process of the environment (Component.Process,
// Cluster.Processes): Name, PID, LogPath, Running, Done, Stop (SIGTERM,
// then SIGKILL after a grace period), Kill and LogTail.
type Process = process.Process

// NodeConfig describes one simulated node of ClusterConfig.Nodes: its
// Name, and optionally Labels, GPU (the label gpu=on) and Capacity.
type NodeConfig = nodeagent.NodeConfig

// PodInfo is what the simulated node knows about a pod it runs
// (Cluster.Pod): UID, Node, IP (the loopback address its processes listen
// on), PodIP (the twin the cluster sees), Dir and Containers.
type PodInfo = nodeagent.PodInfo

// ContainerInfo describes a container process of PodInfo: Name, PID (0
// while not running), Restarts and LogPath.
type ContainerInfo = nodeagent.ContainerInfo
