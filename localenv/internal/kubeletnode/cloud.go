package kubeletnode

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/cozystack/tenantkit/localenv/internal/simnode"
)

// taintUninitialized is the taint a kubelet started with
// --cloud-provider=external puts on its Node until a cloud controller has
// initialized it (k8s.io/cloud-provider/api.TaintExternalCloudProvider).
const taintUninitialized = "node.cloudprovider.kubernetes.io/uninitialized"

// initialize plays the cloud controller for a node: once its kubelet has
// registered the Node, it sets the node's addresses (InternalIP: the node's
// loopback address, which the kubelet itself refuses to take, and its
// host-network pods then get as their IP), its labels, and removes the
// uninitialized taint so that pods are scheduled there.
func (p *Pool) initialize(ctx context.Context, n *node) error {
	nodes := p.cfg.Client.CoreV1().Nodes()
	var node *corev1.Node
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		if exited(n) {
			return false, fmt.Errorf("kubelet of node %s exited: %s", n.cfg.Name, n.proc.LogTail(20))
		}
		var err error
		node, err = nodes.Get(ctx, n.cfg.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		return fmt.Errorf("kubeletnode: wait for node %s to register: %w", n.cfg.Name, err)
	}
	status, err := json.Marshal(map[string]any{"status": map[string]any{"addresses": []corev1.NodeAddress{
		{Type: corev1.NodeInternalIP, Address: n.addr.String()},
		{Type: corev1.NodeHostName, Address: n.cfg.Name},
	}}})
	if err != nil {
		return err
	}
	if _, err := nodes.PatchStatus(ctx, n.cfg.Name, status); err != nil {
		return fmt.Errorf("kubeletnode: node %s addresses: %w", n.cfg.Name, err)
	}
	var taints []corev1.Taint
	for _, t := range node.Spec.Taints {
		if t.Key != taintUninitialized {
			taints = append(taints, t)
		}
	}
	spec, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"labels": labels(n.cfg), "resourceVersion": node.ResourceVersion},
		"spec":     map[string]any{"taints": taints},
	})
	if err != nil {
		return err
	}
	if _, err := nodes.Patch(ctx, n.cfg.Name, types.MergePatchType, spec, metav1.PatchOptions{}); err != nil {
		if apierrors.IsConflict(err) {
			return p.initialize(ctx, n) // the kubelet updated it meanwhile
		}
		return fmt.Errorf("kubeletnode: node %s: %w", n.cfg.Name, err)
	}
	p.log.Info("node initialized", "node", n.cfg.Name, "address", n.addr)
	return nil
}

// exited reports whether the node's process has exited.
func exited(n *node) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.proc != nil && !n.proc.Running()
}

// labels are the labels initialize sets on a node: its configured ones,
// and gpu=on for a GPU node.
func labels(nc simnode.Config) map[string]string {
	out := maps.Clone(nc.Labels)
	if out == nil {
		out = map[string]string{}
	}
	if nc.GPU {
		out["gpu"] = "on"
	}
	return out
}

// Cordon marks a node unschedulable, as kubectl cordon does.
func (p *Pool) Cordon(ctx context.Context, name string) error { return p.schedulable(ctx, name, false) }

// Uncordon makes a node schedulable again.
func (p *Pool) Uncordon(ctx context.Context, name string) error {
	return p.schedulable(ctx, name, true)
}

func (p *Pool) schedulable(ctx context.Context, name string, on bool) error {
	if _, ok := p.nodes[name]; !ok {
		return fmt.Errorf("%w: %s", ErrUnknownNode, name)
	}
	patch := fmt.Appendf(nil, `{"spec":{"unschedulable":%t}}`, !on)
	if _, err := p.cfg.Client.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("kubeletnode: %w", err)
	}
	return nil
}
