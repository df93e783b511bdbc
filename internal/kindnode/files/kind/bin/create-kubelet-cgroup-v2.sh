#!/bin/bash
# On cgroup v2: enables every controller for the kubelet's cgroup roots.
set -o errexit -o nounset -o pipefail
subtree() { sed -e 's/ / +/g' -e 's/^/+/' <"/sys/fs/cgroup/$1/cgroup.controllers" >"/sys/fs/cgroup/$1/cgroup.subtree_control"; }
subtree /
mkdir -p /sys/fs/cgroup/kubelet /sys/fs/cgroup/kubelet.slice
subtree /kubelet
subtree /kubelet.slice
