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
// [Kubernetes.Check] (the names and the values) or [KubernetesSpec.Check]
// (the values alone) then decides as the chart does. The error lists
// every refusal, each a [*FieldError] with a sentinel to branch on, the chart rule's ID (FieldError.Rule, from the
// catalogue in testdata/chart/RULES.md) and the chart's own message. The
// [Warnings] are what the chart accepts but tenantkit reports: fields the
// model does not know and tenantkit's own rules.
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
// kubernetes-<name> fits 53).
//
// # What it mirrors, and where it differs
//
// Check mirrors the chart of one Cozystack release, Platform.Release
// (zero: [LatestRelease]); [Releases] lists them:
//
//   - [Release20260819], cozystack main at 4385990 (2026-08-19): the chart
//     with the FluxCD tenant addon (addons.fluxcd required by the schema,
//     <release>-fluxcd-operator and <release>-fluxcd rendered).
//   - [Release20260821], cozystack main at 3c780ac (2026-08-21), the
//     latest: 7cca3d75e ("remove the FluxCD tenant addon", committed
//     2026-08-20) removed addons.fluxcd, which is now an unknown field the
//     chart ignores; [Kubernetes.AddonReleases] renders FluxCD only for a
//     release that has it ([Release.HasFluxCD]).
//
// The tagged releases v1.6.0–v1.6.2 are not mirrored: their chart predates
// podCpuLimit, podCpuRequest, logSerialConsole, talos.registryMirrors and
// the node-health durations.
//
// Every decision is held to a golden corpus of the chart's verdicts, per
// release, in the package's tests.
//
// A refusal says who decides it ([FieldError.Decider]): the chart (its
// schema and templates, S- and T- rules), Helm (H-), cozystack-api (A-:
// a name that is not a DNS-1035 label, a top-level "_" key) or tenantkit
// (K-). [ValidationError.By] keeps one decider's part: By(DecidedByChart,
// DecidedByHelm) is what rendering the chart decides, By(DecidedByAPI)
// what the API refuses before Helm sees the values.
//
// Values are read as Helm reads them (sigs.k8s.io/yaml, not strict): a
// key set twice keeps its last value (Check warns, K-duplicate-key), a
// merge key yields to the keys beside it. An explicit null is what Helm
// makes of it: deleted where the chart's values.yaml has the key (then
// refused where the schema requires the key, S-null-required, where the
// templates need the section, T-section-null, or a duration,
// T-duration-positive), kept elsewhere — every key of a node group, a
// list item, a control-plane component's resources.cpu — where the schema
// refuses it as a wrong type (S-type).
//
// Deliberate differences, each with its switch:
//
//   - Errors of tenantkit's own (DecidedByTenantkit), where the chart
//     renders what cannot work: an OIDC user without email (the chart's
//     Job fails on the binding's empty subject, and the release with it;
//     package oidc's Bindings refuses it alike) and an inline customConfig
//     that is not an AuthenticationConfiguration or of an apiVersion the
//     cluster's version does not load (the cluster's kube-apiserver will
//     refuse to start with it; ErrCustomConfigUnreadable,
//     ErrCustomConfigVersion; the fact is [AuthenticationConfigLoads]).
//     Switch: ValidationError.By without DecidedByTenantkit.
//   - Warnings, not errors, for what the chart accepts: unknown fields
//     (ErrUnknownField, addons.fluxcd of the latest release included), a
//     key set twice (ErrDuplicateField), an email listed twice
//     (ErrDuplicateUser), a negative minReplicas, maxReplicas below
//     minReplicas, an empty GPU name, one of cpu and memory without an
//     instanceType, a group with neither instanceType nor resources
//     (ErrNodeGroupUnsized). Refusing a non-empty Warnings is the strict
//     choice; ignoring them accepts what the chart accepts.
//   - What only a document shows is checked by ParseSpec and
//     ParseKubernetes, not by DecodeKubernetes nor by Check on typed
//     values, where "" and nil mean the default. Parse what users write.
//     ParseTenant stays strict (unknown and duplicate keys refused): the
//     tenant chart has not been compared.
//   - An explicit null on a required key is refused as Helm refuses it; a
//     newer cozystack-api repairs such nulls before Helm sees them
//     (RULES.md A-null-normalize). Omit the key instead.
//   - The rules the chart decides by a lookup in the management cluster
//     (an instanceType that does not exist, T-instancetype-lookup; kubelet
//     reservations against an instance type's size) are decided when
//     Platform.InstanceTypes is given ([DefaultInstanceTypes] is
//     Cozystack's u1.* series), and not made without it.
//     cozystack-api's 32-character name cap of some builds
//     (A-name-legacy-cap) is not applied; Helm's 53 is.
//   - A node group's resources.cpu or .memory given as the number 0 reads
//     as unset, as the chart's templates read it, and is not written back.
//     Effective sizes from resources are Kubernetes quantities; the chart's
//     helpers parse the same strings alike, exotic CPU units such as "1k"
//     aside. An extra volume's source given as null (secret: null) counts
//     as that source, as in the chart, and is written back as {}. A
//     talos.registryMirrors entry that is not an object is kept as written
//     (RegistryMirror.Raw).
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
// ([ValidationError.Rules]) and who decides it ([FieldError.Decider]: the
// chart, Helm, cozystack-api or tenantkit). Syntax and type errors wrap
// [ErrMalformed]; a whole number beyond int64 where the chart wants an
// integer is tenantkit's refusal, [ErrIntegerRange], not a malformed
// document; invalid names wrap ref.ErrInvalidName.
//
// # Testing
//
// Package tenanttest holds fixtures of the model ([tenanttest.FullSpec]
// sets every field). Package cozystack/cozystacktest fakes the platform on
// any kube-apiserver. This package's tests need no servers.
package tenant
