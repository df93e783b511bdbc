#!/bin/bash
# Imports every image tarball under /kind/images into containerd (k8s.io
# namespace), waiting for containerd's socket first, then writes the marker
# the kubelet waits for.
set -o errexit -o nounset -o pipefail
for _ in $(seq 1 60); do
  ctr --namespace=k8s.io version >/dev/null 2>&1 && break
  sleep 1
done
snapshotter=$(sed -n 's/^ *snapshotter = "\(.*\)"/\1/p' /etc/containerd/config.toml | head -n1)
for f in /kind/images/*.tar; do
  ctr --namespace=k8s.io images import --snapshotter="${snapshotter:-overlayfs}" "$f" >/dev/null
done
echo "imported $(ls /kind/images | wc -l) image archives"
touch /run/tenantkit-images.done
