// Package etcdlayout creates Cozystack tenant etcd clusters in tenantkit's
// local environment, laid out exactly as the operators lay them out, so that
// code operating tenant etcd (package etcdrelocate, examples) is tested
// against the objects it will meet.
//
// # v1alpha1: Cozystack ≤ v1.5 (aenix etcd-operator v0.4.5)
//
// NewV1alpha1 builds, as plain values, the EtcdCluster (etcd.aenix.io/
// v1alpha1, named etcd) the chart renders and what the operator generates
// from it in namespace tenant-<name>:
//
//	StatefulSet  etcd           pods etcd-0..N-1, Parallel, serviceName etcd-headless
//	PVCs         data-etcd-<i>  from the claim template "data", mounted at /var/run/etcd
//	Service      etcd-headless  headless, publishNotReadyAddresses, ports 2380/2379
//	Service      etcd           ports 2379/2381
//	ConfigMap    etcd-cluster-state  ETCD_INITIAL_CLUSTER{,_STATE,_TOKEN}
//	PDB          etcd           minAvailable = quorum
//	Secrets      etcd-ca-tls, etcd-peer-ca-tls, etcd-server-tls, etcd-peer-tls,
//	             etcd-client-tls (CN root); SANs as the chart enumerates them
//
// Apply creates it; WaitReady waits for all members to be Ready and then
// does the one thing the operator does at runtime that matters here: it
// switches etcd-cluster-state to "existing". Members' peer URLs are
// https://etcd-<i>.etcd-headless.<ns>.svc:2380 (StatefulSetPeerURL).
//
// In tests, StartT creates a tenant etcd in an environment started with
// localenv.Config.Cluster and returns a Tenant with clients that reach the
// members through the cluster DNS:
//
//	env := localenv.StartT(t, localenv.Config{Cluster: &localenv.ClusterConfig{}})
//	tn := etcdlayout.StartT(t, env, etcdlayout.Config{Tenant: "demo"})
//	cli, err := tn.Client(ctx) // endpoints https://etcd-<i>.etcd-headless.tenant-demo.svc:2379
//
// The simulated cluster's kube-controller-manager, kube-scheduler, node
// agent and local volumes then do the rest: the StatefulSet controller
// creates pods and claims, the scheduler picks nodes and binds claims to
// local volumes there, and the node agent runs each pod as a real etcd
// process. Deleting a pod and its claim really deletes the member's data;
// cordoning a node steers where it comes back.
//
// # v1alpha2: Cozystack ≥ v1.6 (cozystack etcd-operator v0.5)
//
// NewV1alpha2 builds the etcd-operator.cozystack.io/v1alpha2 EtcdCluster
// "etcd" and the chart's TLS Secrets (wildcard SANs *.etcd.<ns>.svc and
// *.etcd-headless.<ns>.svc); Apply installs the EtcdCluster and EtcdMember
// CRDs and creates them. Everything else comes from an operator: one
// EtcdMember per member (named etcd-<random>), each owning Pod <member> and
// PVC data-<member>, members resolving as <member>.etcd.<ns>.svc
// (MemberPeerURL), Pods labelled etcd-operator.cozystack.io/cluster=etcd and
// role=voter once voters.
//
// The real operator does not run here. Operator is a test-only stand-in
// that does what the operator's code and documentation say happens on
// bootstrap, scaling, spec changes (the status.observed latch, the progress
// deadline and DeadlineExceeded) and member deletion (see Operator for
// exactly what it does and does not model). InstallMemberDeletionGuard
// installs the operator chart's member deletion guard, a
// ValidatingAdmissionPolicy the kube-apiserver enforces itself
// (Config.DeletionGuard). StartV1alpha2 applies the layout and starts the
// stand-in:
//
//	tn := etcdlayout.StartV1alpha2T(t, env, etcdlayout.Config{Tenant: "demo"})
//	names, err := tn.MemberNames(ctx)
//	// delete an EtcdMember: the finalizer removes it from etcd, a new
//	// member joins as a learner and is promoted
//
// # Errors
//
// ErrInvalidConfig reports a configuration that cannot work; ErrBadSecret a
// TLS Secret without a usable certificate, key or CA. API errors are
// wrapped with the object they concern.
//
// # Testing
//
// The layouts are tested against the real control plane of the local
// environment with real etcd members (skipped with -short).
package etcdlayout
