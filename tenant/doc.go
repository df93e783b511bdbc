// Package tenant models Cozystack tenants and their managed Kubernetes
// clusters (the apps.cozystack.io/v1alpha1 Kubernetes application): the
// chart's values as typed Go, the checks the chart makes before it renders,
// the names Cozystack derives, the tenant hierarchy, and a handle on one
// cluster that hands the other tenantkit packages what they need.
//
// # The model
//
// [KubernetesSpec] holds the values of Cozystack's kubernetes chart:
// version, host, storage class, the Kamaji control plane (with the
// apiserver's extraArgs, extraVolumes and extraVolumeMounts), node groups,
// addons with their valuesOverride, and the OIDC mode and users. A zero
// field means "the chart's default"; [KubernetesSpec.WithDefaults] fills
// the defaults in (md0 with u1.medium, 20Gi and the ingress-nginx role when
// there are no node groups). [Kubernetes] is the whole object.
//
// Two decoders, for two sources. What users write is parsed strictly:
// [ParseKubernetes], [ParseSpec] and [ParseTenant] refuse unknown and
// duplicate fields, so a typo ("verison") is an error instead of a setting
// that silently disappears. What the API returns is decoded leniently:
// [DecodeKubernetes], [DecodeTenant] and every read of the [Client] accept
// fields the model does not know yet (a newer Cozystack may add them) and
// keep them with the object — [Kubernetes.UnknownFields] lists them, YAML
// and [Client.ApplyKubernetes] write them back — so a read-modify-write
// loses nothing. Encoding a decoded object gives the same bytes again.
//
//	spec, err := tenant.ParseSpec(valuesYAML)
//	if err != nil { ... }                       // ErrMalformed, ErrUnknownField
//	err = spec.Validate(tenant.Platform{OIDCEnabled: true})
//	if errors.Is(err, tenant.ErrHAMiRequiresGPUOperator) { ... }
//
// [KubernetesSpec.Validate] mirrors the chart's render failures, each as a
// [*FieldError] naming the field and wrapping a sentinel with the chart's
// meaning: OIDC System without platform OIDC, CustomConfig with both or
// neither source, legacy --oidc-* flags while OIDC is on, reserved,
// nameless, duplicate or non-configMap/secret extra volumes, mounts of
// undeclared volumes, HAMi without the GPU Operator, node group CPU without
// memory.
//
// # Names
//
// [ClusterRef] (tenant namespace and application name) derives every name
// the chart uses: the release kubernetes-<name>, the admin kubeconfig
// Secret and its four keys ([KubeconfigVariant]), the OIDC Secrets, the
// addon HelmReleases ([ClusterRef.AddonRelease], [Kubernetes.AddonReleases])
// and the default host kubernetes-<name>.<tenant host>.
//
// # The tenant hierarchy
//
// Tenants nest: children of tenant-root live in tenant-<name>, deeper ones
// in <parent namespace>-<name> ([ChildNamespace], [ParseNamespace]). A
// tenant that runs etcd, ingress, monitoring or SeaweedFS serves itself and
// its descendants; [Tenant.Resolve] computes, as the tenant chart does,
// which namespace serves each ([Services]). A cluster's etcd is its
// tenant's Services.Etcd; Buckets use Services.SeaweedFS.
//
// # Talking to a management cluster
//
// [Client] applies and reads Kubernetes and Tenant applications through the
// dynamic client, so it works the same against Cozystack's aggregated API
// and against CRDs of the same group, version and kinds (package
// tenanttest installs those). It reads a namespace's platform settings and
// services from the cozystack-values Secret Cozystack puts in every tenant
// namespace ([Client.Values]).
//
// [Cluster] is a handle on one tenant cluster, built from a
// management-cluster rest.Config and a [ClusterRef]:
//
//	cl, err := tenant.NewCluster(mgmt, tenant.ClusterRef{Namespace: "tenant-acme", Name: "prod"}, tenant.Config{})
//	cs, err := cl.Clientset(ctx)               // waits for Kamaji's admin kubeconfig
//	etcdNS, err := cl.EtcdNamespace(ctx)       // the tenant etcd storing the cluster
//
// Waits poll every Config.PollInterval and end with ctx.
//
// The handle hands the other packages their inputs, so that nobody
// re-derives a name:
//
//   - oidc: [Cluster.AuthenticationSpec] (renderer input, also pure as
//     [Kubernetes.AuthenticationSpec]), [Cluster.OIDCKubeconfigSpec] (server,
//     tenant CA, issuer, client ID) and [Cluster.SyncOIDCUsers] (the
//     ClusterRoleBindings of spec.oidc.users inside the tenant cluster);
//     [ClusterRef.OIDC] converts the reference;
//   - backup: [Cluster.BucketCredentials], [Cluster.VeleroValues] and
//     [Cluster.EnableVelero] turn a Bucket of the tenant into the Velero
//     addon's values; [Cluster.VeleroClient] drives Velero inside the
//     tenant cluster;
//   - gpushare: [Cluster.GPULedger] is a live ledger of the tenant
//     cluster's GPUs with the cluster's HAMi settings
//     ([Kubernetes.GPUConfig]: policies, resource names, webhook);
//   - etcdrelocate: [Cluster.EtcdRelocation] names the tenant etcd that
//     stores the cluster, [Cluster.Relocator] works on it (set
//     etcdrelocate.Config.Dial to etcdrelocate.PortForwardDialer from
//     outside the management cluster's network).
//
// # Errors
//
// Validation and strict decoding return a [*ValidationError] listing every
// problem; each entry is a [*FieldError] wrapping one sentinel, so
// errors.Is(err, ErrReservedVolume) works on the whole. Syntax and type
// errors wrap [ErrMalformed] (from either decoder); HAMi settings the GPU
// ledger cannot use wrap [ErrInvalidValue]. Reads of missing objects wrap [ErrNotFound];
// a kubeconfig not written yet wraps [ErrKubeconfigNotReady]; a wait ended
// by its context wraps ctx.Err(). Tenants without etcd or SeaweedFS up the
// hierarchy give [ErrNoEtcd] and [ErrNoSeaweedFS].
//
// # Testing
//
// Package tenanttest fakes the platform on any kube-apiserver: the CRDs,
// tenant namespaces rendered as the tenant chart renders them, and the admin
// kubeconfig Secret Kamaji writes, pointing at any apiserver standing in for
// the tenant cluster. This package's own tests run against a real local
// kube-apiserver (internal/localenv) and skip under -short.
package tenant
