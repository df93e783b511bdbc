// Package serverbin builds the real server binaries the local environment
// runs — etcd, kube-apiserver and the others — from the nested Go modules
// under internal/servers, each pinned to an upstream version, and caches them.
//
//	path, err := serverbin.Path(ctx, serverbin.KubeAPIServer)
//
// The first call for a server builds it (printing a progress line, since
// kube-apiserver takes several minutes of CPU); later calls return the cached
// file at once. The cache key covers the server's module files, its main
// package, the build flags and the Go version, so editing a nested module
// rebuilds only what changed. Concurrent callers, in one process or in the
// several test binaries `go test ./...` runs at once, wait on a file lock
// instead of building twice.
//
// The cache lives in $TENANTKIT_CACHE_DIR, or in tenantkit/servers under the
// user cache directory (~/.cache on Linux). `make tools` fills it ahead of
// time so that no test has to build inside go test's timeout.
package serverbin
