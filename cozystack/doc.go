// Package cozystack talks to a Cozystack management cluster: it applies and
// reads the Kubernetes and Tenant applications of package tenant, reads the
// platform values Cozystack gives every tenant namespace, and offers a
// handle on one tenant cluster that hands the other tenantkit packages what
// they need, so that nobody re-derives a name.
//
// # Applications
//
// A [Client] works through the dynamic client, so it behaves the same
// against Cozystack's aggregated API and against CRDs of the same group,
// version and kinds (package cozystacktest installs those):
//
//	c, err := cozystack.NewForConfig(mgmt, cozystack.Config{})
//	k := tenant.NewKubernetes(ref.Cluster{Namespace: "tenant-acme", Name: "prod"}, spec)
//	stored, err := c.ApplyKubernetes(ctx, k) // validated against the namespace's platform first
//	k, err = c.Kubernetes(ctx, ref.Cluster{Namespace: "tenant-acme", Name: "prod"})
//
// Reads keep the fields the model does not know and applies write them
// back, so a read-modify-write through an older tenantkit loses nothing.
// [Config] takes the clients as interfaces ([New]); [NewForConfig] builds
// them from a rest.Config.
//
// # One tenant cluster
//
// [Cluster] is a handle on one tenant cluster, from its ref.Cluster:
//
//	cl, err := cozystack.NewCluster(mgmt, ref.Cluster{Namespace: "tenant-acme", Name: "prod"}, cozystack.Config{})
//	cs, err := cl.Clientset(ctx)               // waits for Kamaji's admin kubeconfig
//	etcdNS, err := cl.EtcdNamespace(ctx)       // the tenant etcd storing the cluster
//
// (ExampleNewCluster compiles these calls; Example runs the applications
// above against client-go's fakes.)
//
// Waits poll every Config.PollInterval and end with ctx. The handle hands
// the other packages their inputs:
//
//   - oidc: [Cluster.AuthenticationSpec] (renderer input; offline it is
//     oidc.AuthenticationSpecFor), [Cluster.OIDCKubeconfigSpec] (server,
//     tenant CA, issuer, client ID; offline oidc.KubeconfigSpecFor),
//     [Cluster.SyncOIDCUsers] (the ClusterRoleBindings of spec.oidc.users
//     inside the tenant cluster, as the chart's bootstrap Job keeps them:
//     in modes System and CustomConfig one per user and the release's
//     others pruned; in mode None none applied and none pruned) and
//     [Cluster.PruneOIDCUsers] (every binding of the release deleted,
//     whatever the mode, as the chart's pre-delete Job does: the explicit
//     way to clear bindings left by an earlier mode);
//   - backup: [Cluster.BucketCredentials], [Cluster.VeleroValues] and
//     [Cluster.EnableVelero] turn a Bucket of the tenant into the Velero
//     addon's values (package backup owns them); [Cluster.VeleroClient]
//     drives Velero inside the tenant cluster;
//   - gpushare: [Cluster.HAMiSettings] and [Cluster.EnableHAMi] read and
//     write the HAMi addon's values (package gpushare owns them);
//     [Cluster.GPULedger] is a live ledger of the tenant cluster's GPUs with
//     those settings;
//   - etcdrelocate: [Cluster.EtcdRelocation] names the tenant etcd that
//     stores the cluster, [Cluster.Relocator] works on it (set
//     etcdrelocate.Config.Dial to etcdrelocate.PortForwardDialer from
//     outside the management cluster's network).
//
// # Errors
//
// Reads of missing objects wrap [ErrNotFound]; a kubeconfig not written
// yet wraps [ErrKubeconfigNotReady], an unusable one
// [ErrMalformedKubeconfig]; a wait ended by its context wraps ctx.Err().
// Tenants without etcd or SeaweedFS up the hierarchy give [ErrNoEtcd] and
// [ErrNoSeaweedFS]. Validation errors are package tenant's, invalid names
// package ref's.
//
// # Testing
//
// Package cozystacktest fakes the platform on any kube-apiserver: the CRDs,
// tenant namespaces rendered as the tenant chart renders them, and the
// admin kubeconfig Secret Kamaji writes, pointing at any apiserver standing
// in for the tenant cluster. This package's tests run against a real local
// kube-apiserver (package localenv) and skip under -short.
package cozystack
