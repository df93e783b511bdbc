// Package tenant models Cozystack tenants and their managed Kubernetes
// clusters (the apps.cozystack.io/v1alpha1 Kubernetes application): values,
// names, kubeconfigs, and the handles the other tenantkit packages need.
package tenant
