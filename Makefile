# tenantkit — see README.md. Every target installs or builds what it needs.

GO ?= go
STATICCHECK_VERSION ?= v0.8.2
# go-nvml's headers mark some NVML calls deprecated; keep cgo quiet about it.
export CGO_CFLAGS ?= -O2 -Wno-deprecated-declarations
# Nested modules with tests of their own (they need dependencies the
# library's go.mod must not carry).
TEST_MODULES ?= oidc/internal/apiserverauthn
GOTEST_FLAGS ?= -timeout 45m
# go build invocations buildservers runs at once (make tools)
TOOLS_JOBS ?= 2
# DOCKER: "yes" where a Docker engine answers; then make test builds the kind node image and
# runs the kind tests (set DOCKER= to leave them out)
DOCKER ?= $(shell docker info >/dev/null 2>&1 && echo yes)

.PHONY: all tools packages kind-node-image test test-kind test-kubelet test-short test-seaweedfs bench demo lint

all: test

## tools: build and cache the server binaries (etcd, kube-apiserver, ...) up front: the slow
## ones first, TOOLS_JOBS go builds at once, every module downloading from the start; servers
## named by TENANTKIT_<NAME>_BIN or KUBEBUILDER_ASSETS are checked instead of built
tools:
	$(GO) run ./internal/serverbin/buildservers -j $(TOOLS_JOBS)

## packages: the Debian packages that kubelet nodes run (containerd, runc), and where Docker
## answers debootstrap (the kind node image's root filesystem), installed when missing and this
## is a Debian machine where we are root; elsewhere their tests skip
packages:
	@command -v containerd >/dev/null && command -v runc >/dev/null || \
	{ echo "tenantkit: installing containerd and runc (Debian packages) for the kubelet nodes ..."; \
	  apt-get install -y --no-install-recommends containerd runc || echo "tenantkit: not installed: kubelet node tests will skip"; }
	@test -z "$(DOCKER)" || command -v debootstrap >/dev/null || \
	{ echo "tenantkit: installing debootstrap (Debian package) for the kind node image ..."; \
	  apt-get install -y --no-install-recommends debootstrap || echo "tenantkit: not installed: make kind-node-image will say so"; }

## kind-node-image: tenantkit's kind node image (Kubernetes v1.37.2 with every image a cluster
## runs inside it), built offline from Debian's packages (debootstrap) and the pinned modules
## when docker lacks it; cached by what decides it (see internal/kindnode)
kind-node-image:
	$(GO) run ./internal/kindnode/buildnodeimage

# The kind tests: each creates its own kind cluster, one at a time (-p 1): the nodes' systemd,
# containerd and kubelets hold inotify instances, which count against the host's
# fs.inotify.max_user_instances (128 by default) with the host's own; a cluster of one control
# plane and three workers holds about 70, so two of them, or one beside kubelet nodes, run out
KIND_TESTS = -p 1 -run '^TestKind|_kind$$' ./localenv/ ./etcdrelocate/ ./examples/...

## test: every test, integration included, against real servers (all built first: go test's
## timeout never runs into a build), in two phases that keep both cores busy:
##  1. go test ./..., beside the kind node image build where Docker answers;
##  2. two lanes at once: -race on the packages that say they are safe for concurrent use
##     (RACE_PACKAGES) and the nested modules' tests; and on real kubelet
##     nodes the tenant etcd layouts and the two relocation end-to-end tests (make test-kubelet
##     runs the whole relocation suite there), then, where Docker answers, the kind tests (make
##     test-kind), which must not run beside kubelet nodes (see KIND_TESTS).
## Phase 2 waits for phase 1: its TestKubeletNodes snapshots the host's mounts, cgroups and
## network, which kubelet nodes and kind clusters started beside it would change.
test: tools packages
	@$(MAKE) --no-print-directory -j2 test-lane-race test-lane-kind

# The packages whose documentation says their types are safe for concurrent use
# (grep -rl 'safe for concurrent' --include='*.go' .), tested again under -race in make
# test's race lane. localenv (Env, Cluster) and backup are not in it yet: most of their tests
# start etcd, kube-apiserver or an S3 server, and their cost under -race is not measured.
RACE_PACKAGES ?= ./gpushare/... ./oidc/... ./internal/serverbin/ \
	./localenv/internal/loopnet/ ./localenv/internal/localvolume/ ./localenv/internal/nodeagent/

# test's phases and lanes (make test runs them in order, two at once)
.PHONY: test-phase-go test-lane-kubelet test-lane-race test-lane-kind
test-phase-go:
	$(GO) test $(GOTEST_FLAGS) ./...
test-lane-kubelet: test-phase-go
	TENANTKIT_NODE_KIND=kubelet $(GO) test $(GOTEST_FLAGS) ./localenv/etcdlayout/...
	TENANTKIT_NODE_KIND=kubelet $(GO) test $(GOTEST_FLAGS) -run '^TestRelocate(StatefulSet|EtcdMember)$$' ./etcdrelocate/
test-lane-race: test-phase-go
	$(GO) test -race $(GOTEST_FLAGS) $(RACE_PACKAGES)
	@for m in $(TEST_MODULES); do echo "== go test in $$m"; (cd $$m && $(GO) test $(GOTEST_FLAGS) ./...) || exit 1; done
test-lane-kind: test-lane-kubelet $(if $(DOCKER),kind-node-image)
	$(if $(DOCKER),TENANTKIT_KIND=1 $(GO) test $(GOTEST_FLAGS) $(KIND_TESTS),@echo "tenantkit: no Docker engine answers (docker info): the kind tests are left out")

## test-kind: only the kind tests (TENANTKIT_KIND=1; make test runs them too where Docker
## answers): a 1+2 node cluster from tenantkit's offline node image (built first), DNS and
## Services across nodes, the host unchanged; the examples with --kubeconfig against kind
## clusters; a relocation with the target node cut off the cluster network
test-kind: tools kind-node-image
	TENANTKIT_KIND=1 $(GO) test $(GOTEST_FLAGS) $(KIND_TESTS)

## test-kubelet: the tenant etcd layouts and the whole relocation suite on real kubelet nodes
## (about 20 minutes on two cores; needs root, containerd and runc)
test-kubelet: tools packages
	TENANTKIT_NODE_KIND=kubelet $(GO) test $(GOTEST_FLAGS) ./localenv/etcdlayout/... ./etcdrelocate/...

## test-short: unit tests only (no servers started)
test-short:
	$(GO) test -short ./...

## test-seaweedfs: the backup tests against SeaweedFS `weed mini` (what Cozystack runs) instead
## of versitygw; opt-in, not part of test: weed's cold build takes several minutes
test-seaweedfs:
	$(GO) run ./internal/serverbin/buildservers etcd kube-apiserver velero velero-plugin-for-aws weed
	TENANTKIT_S3_BACKEND=seaweedfs $(GO) test $(GOTEST_FLAGS) ./backup/...

## bench: benchmarks, reported as ratios against a baseline in the same run
bench: tools
	$(GO) test -run '^$$' -bench . -benchmem $(BENCH_FLAGS) ./...
	@for m in $(TEST_MODULES); do echo "== go test -bench in $$m"; (cd $$m && $(GO) test -run '^$$' -bench . -benchmem $(BENCH_FLAGS) ./...) || exit 1; done

## demo: the quickstart on the embedded local environment; on a first run it builds the
## servers itself, in the order its steps need them, and plays the first ones meanwhile
demo:
	$(GO) run ./examples/quickstart

## lint: go vet, staticcheck (pinned, run through go run) and the exported API against
## docs/api/surface.txt, each name added or removed since the last release named in CHANGELOG.md
lint:
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...
	$(GO) test -count=1 ./internal/apisurface/
