// Package tenantkit is a Go SDK for operating Cozystack's managed tenant
// Kubernetes clusters. The root package holds no code; it is the map.
//
// # Packages
//
//   - [github.com/cozystack/tenantkit/tenant]: the tenant cluster model —
//     Cozystack's Kubernetes application values, names, kubeconfigs — and a
//     cluster handle that hands the other packages what they need. Start here.
//   - [github.com/cozystack/tenantkit/oidc]: per-cluster OIDC audiences: render
//     the apiserver AuthenticationConfiguration, Keycloak clients, user
//     kubeconfigs and RBAC bindings, and verify tokens exactly as
//     kube-apiserver does.
//   - [github.com/cozystack/tenantkit/gpushare]: HAMi-compatible fractional GPU
//     accounting: annotation codecs, fit and score, a live ledger, NVML
//     discovery.
//   - [github.com/cozystack/tenantkit/backup]: Velero backups to an S3 bucket:
//     settings from Bucket credentials, the Backup/Restore/Schedule
//     lifecycle, and verification straight from S3.
//   - [github.com/cozystack/tenantkit/etcdrelocate]: move a tenant etcd replica
//     to another node without losing quorum or data, as a printable plan and a
//     resumable executor.
//
// # Examples
//
// The programs under examples/ are tutorials and tools at once: each runs
// against an embedded local environment (real etcd and kube-apiserver
// processes on loopback) by default, or against a real cluster with
// --kubeconfig. `make demo` runs examples/quickstart, the whole story.
package tenantkit
