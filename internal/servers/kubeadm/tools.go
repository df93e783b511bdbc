//go:build tools

// Package tools pins the Kubernetes programs of tenantkit's kind node image
// that the control plane's module (internal/servers/kube) does not build:
// kubeadm, kubectl and kube-proxy v1.37.2, built from the upstream main
// packages with `go build k8s.io/kubernetes/cmd/kubeadm` and so on (see
// internal/serverbin). Every module this one shares with kube is at kube's
// version, so that a cold build compiles the packages they share once.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kubeadm"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
