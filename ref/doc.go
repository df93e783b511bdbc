// Package ref identifies Cozystack tenants and their Kubernetes clusters and
// derives every name Cozystack gives them. It is the smallest package of
// tenantkit: the standard library and Kubernetes' name validation only, so
// any package can name a cluster without importing the model.
//
// A [Cluster] is a Kubernetes application (Name) in a tenant namespace
// (Namespace). Every other name comes from those two, as Cozystack's
// kubernetes chart derives it:
//
//	c := ref.Cluster{Namespace: "tenant-acme", Name: "prod"}
//	c.Release()               // kubernetes-prod: the Helm release, Cluster API Cluster, KamajiControlPlane
//	c.AdminKubeconfigSecret() // kubernetes-prod-admin-kubeconfig, keys: the KubeconfigVariant values
//	c.ClientID()              // tenant-acme-kubernetes-prod: the OIDC client ID and audience
//	c.TenantGroups()          // tenant-acme-view, -use, -admin, -super-admin
//
// Tenants nest: children of tenant-root live in tenant-<name>, deeper ones
// in <parent namespace>-<name> ([ChildNamespace], [ParseNamespace],
// [ParentNamespace], [Ancestors]).
//
// # Errors
//
// Names Cozystack cannot use are refused with an error wrapping
// [ErrInvalidName]. [Cluster.Validate] checks what cozystack-api and Helm
// check of a Kubernetes application's name: a DNS-1035 label (a letter
// first) of at most [MaxNameLen] (42) characters, so that the release
// kubernetes-<name> fits Helm's 53. The 32-character cap some
// cozystack-api builds apply to applications without a name schema is not
// applied.
package ref
