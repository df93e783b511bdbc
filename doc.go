// Package tenantkit is a Go SDK for operating Cozystack's managed tenant
// Kubernetes clusters: their model, OIDC access, GPU sharing, backups and
// etcd. The root package holds no code; it is the map.
//
// # The picture
//
// In Cozystack a tenant (namespace tenant-<name>) orders a Kubernetes
// cluster by creating an apps.cozystack.io/v1alpha1 Kubernetes application
// on the management cluster. The chart turns its values into a Kamaji
// control plane, worker VMs and addons inside the tenant cluster; the
// cluster's data lives in its tenant's etcd; Kamaji writes an admin
// kubeconfig Secret. tenantkit models that object and reaches everything
// around it from one handle, so no caller derives a name by hand:
//
//	cl, err := cozystack.NewCluster(mgmt, ref.Cluster{Namespace: "tenant-acme", Name: "prod"}, cozystack.Config{})
//	k, err := cl.Kubernetes(ctx)                   // the application, typed (unknown fields kept)
//	_, err = k.Check(platform)                     // the chart's render failures, as typed errors
//	spec, err := cl.AuthenticationSpec(ctx)        // → oidc.RenderAuthentication
//	ledger, err := cl.GPULedger(ctx, gpushare.Config{})  // live HAMi accounting of the tenant cluster
//	k, err = cl.EnableVelero(ctx, "backups", "velero", backup.ValuesOptions{}) // addon values from a Bucket
//	req, err := cl.EtcdRelocation(ctx, "etcd-1", "node-d") // → etcdrelocate plan and executor
//
// (The package Example compiles these calls.)
//
// # Packages
//
// Imports flow one way, from the smallest package up: ref ← tenant ← oidc;
// gpushare, backup and etcdrelocate stand on their own; cozystack joins
// them. A program that needs the model alone compiles ref and tenant only
// (the dependency test at the module root keeps it so).
//
//   - [github.com/cozystack/tenantkit/ref]: a tenant cluster's reference
//     and every name Cozystack derives from it (release, Secrets, OIDC
//     client ID, tenant groups), and the tenant namespace hierarchy.
//   - [github.com/cozystack/tenantkit/tenant]: the tenant cluster model —
//     Cozystack's Kubernetes and Tenant application values, the chart's
//     checks, defaults, addons, services of the tenant hierarchy. Pure:
//     no cluster access.
//   - [github.com/cozystack/tenantkit/cozystack]: a management cluster's
//     applications (apply, read, list, delete) and the handle on one tenant
//     cluster above, which hands the other packages their inputs. Start
//     here for live clusters.
//   - [github.com/cozystack/tenantkit/oidc]: per-cluster OIDC audiences, so
//     a token for cluster A is refused by cluster B: render the apiserver
//     AuthenticationConfiguration, Keycloak clients, user kubeconfigs and
//     RBAC bindings, and verify tokens exactly as kube-apiserver does.
//   - [github.com/cozystack/tenantkit/oidc/credential]: the kubectl user's
//     sign-in (go-oidc v3, PKCE, device grant, refresh), a per-user cache
//     locked across processes, and the ExecCredential kubectl reads.
//   - [github.com/cozystack/tenantkit/gpushare]: HAMi-compatible fractional
//     GPU accounting: annotation codecs, fit and score with HAMi's rules, a
//     live ledger, explanations, what-if, NVML discovery.
//   - [github.com/cozystack/tenantkit/backup]: Velero backups to an S3
//     Bucket: settings from Bucket credentials, the Backup/Restore/Schedule
//     lifecycle, and verification straight from S3.
//   - [github.com/cozystack/tenantkit/etcdrelocate]: move a tenant etcd
//     replica to another node without losing quorum or data, as a printable
//     plan and a resumable executor.
//
// Each package's doc teaches its flow and lists its errors (sentinels to
// branch on with errors.Is, typed errors with details); integrators' fakes
// and fixtures live in <pkg>test packages (tenanttest, cozystacktest,
// oidctest, gpusharetest, backuptest, etcdrelocatetest).
//
// # Examples and the local environment
//
// The programs under examples/ are tutorials and tools at once. Each runs
// against an embedded local environment by default — real etcd,
// kube-apiserver, controller manager and scheduler processes on loopback,
// with dex, an S3 server and Velero where needed and simulated nodes that
// run real etcd members — or against a real cluster with --kubeconfig.
// `make demo` runs examples/quickstart, which plays every capability end to
// end and prints a summary table; the tests run it too. The first run
// builds the servers from pinned Go modules (internal/servers) and caches
// them; later runs start in seconds. Their command-line conventions
// (package cli) need only client-go: each example plugs the local
// environment in, so a tool of one's own that uses cli compiles none of it.
package tenantkit
