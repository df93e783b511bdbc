// Package tenant models Cozystack tenants and their managed Kubernetes
// clusters (the apps.cozystack.io/v1alpha1 Kubernetes application): the
// chart's values as typed Go, the decisions the chart makes before it
// renders, the chart's defaults, addons and the services of the tenant
// hierarchy. It is pure: no cluster access, and of tenantkit only package
// ref (names) below it. Package cozystack reads and writes these objects on
// a management cluster and hands them to the other packages.
//
// # The model
//
// [KubernetesSpec] holds the values of Cozystack's kubernetes chart:
// version, host, storage class, the Kamaji control plane (with the
// apiserver's extraArgs, extraVolumes and extraVolumeMounts), node groups,
// addons with their valuesOverride, the OIDC mode and users, Talos (with
// its registry mirrors) and the node health check. A zero field means "the
// chart's default"; [KubernetesSpec.WithDefaults] fills the defaults in
// (md0 with u1.medium, 20Gi and the ingress-nginx role when there are no
// node groups). The four keys the chart requires in every node group are
// always written by YAML: MinReplicas and InstanceType as they are ("" is
// no instance type), MaxReplicas and DiskSize as 10 and 20Gi when nil.
// [Kubernetes] is the whole object; [Kubernetes.Ref] names it (a
// ref.Cluster, which derives every name the chart uses).
//
// # Reading, checking, writing
//
// What users write is parsed by [ParseSpec] and [ParseKubernetes], which
// also check what only the document shows (the chart sees values after
// Helm merged them): a node group without one of its four required keys
// ([ErrRequiredField]), an explicit null where Helm's deletion of the key
// breaks the chart ([ErrNullValue]), "" where only an absent key means the
// default ([ErrInvalidValue] for the enums, [ErrMaxUnhealthy],
// [ErrDuration]), a fractional number as a quantity. Fields the model does
// not know are kept, as the chart's schema allows them: encoding writes
// them back. What the API returns is decoded by [DecodeKubernetes] and
// [DecodeTenant], which keep unknown fields too but check nothing, so a
// read-modify-write loses nothing.
//
// [KubernetesSpec.Check] (and [Kubernetes.Check]) then decides as the
// chart does. The error lists every refusal, each a [*FieldError] with a
// sentinel to branch on, the chart rule's ID (FieldError.Rule, from the
// catalogue in testdata/chart/RULES.md) and the chart's own message. The
// [Warnings] are what the chart accepts but tenantkit reports: fields the
// model does not know and tenantkit's own rules. Validate is Check's error.
//
//	spec, err := tenant.ParseSpec(valuesYAML)
//	if err != nil { ... }                      // ErrMalformed, ErrRequiredField, ErrNullValue, ...
//	warnings, err := spec.Check(tenant.Platform{OIDCEnabled: true})
//	if errors.Is(err, tenant.ErrHAMiRequiresGPUOperator) { ... }
//	if warnings.Has(tenant.ErrUnknownField) { ... } // a typo such as "verison"
//
// The chart's refusals Check mirrors: the schema's enums (version, OIDC
// mode and roles, resources presets, ingress expose method), the OIDC
// modes' sources and platform flag, legacy --oidc-* flags while OIDC is
// on, the apiserver's extra volumes and mounts (an unknown key of a volume
// counts as a source, as in the chart), HAMi without the GPU Operator,
// ouroboros without ingress-nginx and its gatewayApi override without the
// Gateway API, the removed ephemeralStorage, node group sizing (cpu and
// memory in pairs, podCpuLimit and podCpuRequest), the kubelet's
// reservations and eviction thresholds and their totals against the node,
// maxUnhealthy and the health-check and autoscaler durations, a top-level
// "_" key (cozystack-api) and, for a whole object, the name (a DNS-1035
// label of at most 42 characters, so that the Helm release
// kubernetes-<name> fits 53). [KubernetesSpec.ValidateAuthentication] is
// the part package oidc's renderer checks again.
//
// # What it mirrors, and where it differs
//
// The rules are read from the chart at the commits testdata/chart/RULES.md
// names (the values schema as kubernetes-rd ships it at 0046662, the node
// group templates at 0034da0, the OIDC templates at 3fb8ec5 and 48584a4);
// the golden corpus testdata/chart/cases (456 value sets) holds tenantkit
// to every decision: TestChartCorpus requires the chart's verdict, for the
// chart's reason, and exactly the expected warnings. The addon list
// includes fluxcd: the schema at 0046662 requires addons.fluxcd and
// templates/helmreleases/fluxcd.yaml (stored at 4f97aef and fd54647)
// renders it; the research notes' addon list (at 3c780ac, not stored)
// omits it.
//
// Deliberate differences, each with its switch:
//
//   - Warnings, not errors, for what the chart accepts: unknown fields
//     (ErrUnknownField), a negative minReplicas, maxReplicas below
//     minReplicas, an empty GPU name or user email, one of cpu and memory
//     without an instanceType, a group with neither instanceType nor
//     resources (ErrNodeGroupUnsized), an inline customConfig that is not
//     an AuthenticationConfiguration or of an apiVersion the cluster's
//     version does not load (ErrCustomConfigUnreadable,
//     ErrCustomConfigVersion; the fact is [AuthenticationConfigLoads]).
//     Warnings.Err refuses them; ignoring the warnings accepts what the
//     chart accepts.
//   - What only a document shows is checked by ParseSpec and
//     ParseKubernetes, not by DecodeKubernetes nor by Check on typed
//     values, where "" and nil mean the default. Parse what users write.
//   - An explicit null on a required key is refused as Helm refuses it; a
//     newer cozystack-api repairs such nulls before Helm sees them
//     (RULES.md A-null-normalize). Omit the key instead.
//   - Decisions that need a lookup in the management cluster are not made:
//     whether an instance type exists, and the kubelet totals of a group
//     sized by its instance type (sized by resources, they are checked).
//     cozystack-api's 32-character name cap of some builds
//     (A-name-legacy-cap) is not applied; Helm's 53 is.
//   - A node group's resources.cpu or .memory given as the number 0 reads
//     as unset, as the chart's templates read it, and is not written back.
//     Effective sizes from resources are Kubernetes quantities; the chart's
//     helpers parse the same strings alike, exotic CPU units such as "1k"
//     aside. A node group's maxUnhealthy of "" keeps the cluster's.
//   - ParseTenant still refuses unknown fields: the tenant chart has not
//     been compared.
//
// # Addons and their values
//
// [Addons] switches the chart's addons and carries each one's
// valuesOverride as plain Helm values. The packages that know an addon's
// values own them: package backup renders the Velero addon's values and
// package gpushare reads and writes HAMi's (gpushare.HAMiSettings).
// [Kubernetes.AddonReleases] lists the Flux HelmReleases the chart renders.
//
// # The tenant hierarchy
//
// A tenant that runs etcd, ingress, monitoring or SeaweedFS serves itself
// and its descendants; [Tenant.Resolve] computes, as the tenant chart does,
// which namespace serves each ([Services]). A cluster's etcd is its
// tenant's Services.Etcd; Buckets use Services.SeaweedFS. [ParseValues]
// reads the platform settings and services Cozystack puts in every tenant
// namespace (the cozystack-values Secret); the namespace names themselves
// are package ref's.
//
// # Errors
//
// Checks and parsers return a [*ValidationError] listing every problem;
// each entry is a [*FieldError] wrapping one sentinel, so
// errors.Is(err, ErrReservedVolume) works on the whole, and naming the rule
// ([ValidationError.Rules]). Syntax and type errors wrap [ErrMalformed];
// invalid names wrap ref.ErrInvalidName.
//
// # Testing
//
// Package tenanttest holds fixtures of the model ([tenanttest.FullSpec]
// sets every field). Package cozystack/cozystacktest fakes the platform on
// any kube-apiserver. This package's tests need no servers.
package tenant
