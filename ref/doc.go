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
// [ErrInvalidName].
package ref
