// Package serverbin builds the real server binaries the local environment
// runs — etcd, kube-apiserver and the others — from the nested Go modules
// under internal/servers, each pinned to an upstream version, and caches them.
//
//	path, err := serverbin.Path(ctx, serverbin.KubeAPIServer)
//
// The first call for a server builds it (printing a progress line, since
// kube-apiserver takes several minutes of CPU); later calls return the cached
// file at once. Concurrent callers, in one process or in the several test
// binaries `go test ./...` runs at once, wait on a file lock instead of
// building twice.
//
// # Cache key
//
// Builder.Key hashes what decides a binary and nothing else: the server's
// name, version, main package and linker flags, the Go version, its nested
// module's go.mod and go.sum, and its main package's own sources. Editing
// anything else in the repository, or moving it, rebuilds nothing; editing
// one server's module rebuilds only that module's servers. Builds of other
// keys stay in the cache for a week after their last use, so that switching
// branches does not rebuild either.
//
// # Several servers
//
// Builder.Build builds a list: the servers of one nested module (the three
// Kubernetes control plane components; velero and its AWS plugin) in one
// go build, two go builds at a time, with every module's download started
// up front. `make tools` runs it through the buildservers command, so that
// no test has to build inside go test's timeout.
//
// # Overrides
//
// Override reads the environment variables that name a binary instead of a
// build: TENANTKIT_<NAME>_BIN for any server, and for upstream binaries
// envtest's own conventions, TEST_ASSET_<NAME> and the folder
// KUBEBUILDER_ASSETS that setup-envtest fills (etcd, kube-apiserver).
// CheckBinary runs an override's version command and refuses another major
// version or one older than Server.MinVersion; package localenv logs any
// other difference from the pinned version. TENANTKIT_NO_BUILD forbids
// builds altogether.
//
// The cache lives in $TENANTKIT_CACHE_DIR, or in tenantkit/servers under the
// user cache directory (~/.cache on Linux).
package serverbin
