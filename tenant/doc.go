// Package tenant models Cozystack tenants and their managed Kubernetes
// clusters (the apps.cozystack.io/v1alpha1 Kubernetes application): the
// chart's values as typed Go, the checks the chart makes before it renders,
// the chart's defaults, addons and the services of the tenant hierarchy.
// It is pure: no cluster access, and of tenantkit only package ref (names)
// below it. Package cozystack reads and writes these objects on a
// management cluster and hands them to the other packages.
//
// # The model
//
// [KubernetesSpec] holds the values of Cozystack's kubernetes chart:
// version, host, storage class, the Kamaji control plane (with the
// apiserver's extraArgs, extraVolumes and extraVolumeMounts), node groups,
// addons with their valuesOverride, and the OIDC mode and users. A zero
// field means "the chart's default"; [KubernetesSpec.WithDefaults] fills
// the defaults in (md0 with u1.medium, 20Gi and the ingress-nginx role when
// there are no node groups). [Kubernetes] is the whole object;
// [Kubernetes.Ref] names it (a ref.Cluster, which derives every name the
// chart uses).
//
// Two decoders, for two sources. What users write is parsed strictly:
// [ParseKubernetes], [ParseSpec] and [ParseTenant] refuse unknown and
// duplicate fields, so a typo ("verison") is an error instead of a setting
// that silently disappears. What the API returns is decoded leniently:
// [DecodeKubernetes] and [DecodeTenant] accept fields the model does not
// know yet (a newer Cozystack may add them) and keep them with the object —
// [Kubernetes.UnknownFields] lists them, encoding writes them back — so a
// read-modify-write loses nothing. Encoding a decoded object gives the same
// bytes again.
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
// memory. [KubernetesSpec.ValidateAuthentication] is the part package oidc's
// renderer checks again.
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
// Validation and strict decoding return a [*ValidationError] listing every
// problem; each entry is a [*FieldError] wrapping one sentinel, so
// errors.Is(err, ErrReservedVolume) works on the whole. Syntax and type
// errors wrap [ErrMalformed] (from either decoder); values outside the
// schema wrap [ErrInvalidValue]; invalid names wrap ref.ErrInvalidName.
//
// # Testing
//
// Package tenanttest holds fixtures of the model ([tenanttest.FullSpec]
// sets every field). Package cozystack/cozystacktest fakes the platform on
// any kube-apiserver. This package's tests need no servers.
package tenant
