package nodeagent

import (
	"context"
	"fmt"
	"maps"
	"net/netip"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"

	"github.com/cozystack/tenantkit/localenv/internal/loopnet"
	"github.com/cozystack/tenantkit/localenv/internal/simnode"
)

// kubeletVersion is what simulated nodes report as their kubelet version:
// the version of the control plane they join.
const kubeletVersion = "v1.37.2"

// node is one simulated node.
type node struct {
	agent  *Agent
	cfg    simnode.Config
	subnet *loopnet.Subnet
	dir    string

	mu   sync.Mutex
	down bool
}

func (n *node) isDown() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.down
}

// clusterAddr is the node's address as the cluster sees it (see
// loopnet's cluster addresses).
func (n *node) clusterAddr() netip.Addr { return n.agent.cfg.Network.ClusterAddr(n.subnet.NodeAddr()) }

// register creates the Node object, reports it Ready and creates its Lease.
func (n *node) register(ctx context.Context) error {
	cs := n.agent.cfg.Client
	labels := map[string]string{
		corev1.LabelHostname:   n.cfg.Name,
		corev1.LabelOSStable:   "linux",
		corev1.LabelArchStable: "amd64",
	}
	if n.cfg.GPU {
		labels["gpu"] = "on"
	}
	maps.Copy(labels, n.cfg.Labels)
	cidr := netip.PrefixFrom(n.agent.cfg.Network.ClusterAddr(n.subnet.Prefix().Addr()), 24).String()
	obj := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: n.cfg.Name, Labels: labels},
		Spec:       corev1.NodeSpec{PodCIDR: cidr, PodCIDRs: []string{cidr}},
	}
	created, err := cs.CoreV1().Nodes().Create(ctx, obj, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("register node %s: %w", n.cfg.Name, err)
	}
	if err := n.postStatus(ctx); err != nil {
		return err
	}
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{
			Name: n.cfg.Name, Namespace: corev1.NamespaceNodeLease,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: created.Name, UID: created.UID}},
		},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       &n.cfg.Name,
			LeaseDurationSeconds: new(int32(max(1, 5*n.agent.cfg.HeartbeatInterval/time.Second))),
			RenewTime:            &metav1.MicroTime{Time: time.Now()},
		},
	}
	if _, err := cs.CoordinationV1().Leases(corev1.NamespaceNodeLease).Create(ctx, lease, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("register node %s: lease: %w", n.cfg.Name, err)
	}
	return nil
}

// postStatus reports the node Ready with its capacity and addresses, as the
// kubelet does on start and whenever its status changes.
func (n *node) postStatus(ctx context.Context) error {
	cs := n.agent.cfg.Client
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := cs.CoreV1().Nodes().Get(ctx, n.cfg.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Status = n.status(cur.Status)
		_, err = cs.CoreV1().Nodes().UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("node %s: post status: %w", n.cfg.Name, err)
	}
	return nil
}

func (n *node) status(old corev1.NodeStatus) corev1.NodeStatus {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse("8"),
		corev1.ResourceMemory:           resource.MustParse("32Gi"),
		corev1.ResourcePods:             resource.MustParse("110"),
		corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
	}
	maps.Copy(capacity, n.cfg.Capacity)
	now := metav1.Now()
	cond := func(t corev1.NodeConditionType, s corev1.ConditionStatus, reason, msg string) corev1.NodeCondition {
		c := corev1.NodeCondition{Type: t, Status: s, Reason: reason, Message: msg, LastHeartbeatTime: now, LastTransitionTime: now}
		for _, o := range old.Conditions {
			if o.Type == t && o.Status == s {
				c.LastTransitionTime = o.LastTransitionTime
			}
		}
		return c
	}
	return corev1.NodeStatus{
		Capacity:    capacity,
		Allocatable: capacity.DeepCopy(),
		Phase:       corev1.NodeRunning,
		Conditions: []corev1.NodeCondition{
			cond(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory", "simulated node"),
			cond(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure", "simulated node"),
			cond(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID", "simulated node"),
			cond(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady", "tenantkit node agent is posting ready status"),
		},
		Addresses: []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: n.clusterAddr().String()},
			{Type: corev1.NodeHostName, Address: n.cfg.Name},
		},
		NodeInfo: corev1.NodeSystemInfo{
			KubeletVersion:          kubeletVersion,
			ContainerRuntimeVersion: "tenantkit://simulated",
			OperatingSystem:         "linux",
			Architecture:            "amd64",
			OSImage:                 "tenantkit simulated node",
			KernelVersion:           "simulated",
		},
	}
}

// renew renews the node's Lease, the heartbeat the node lifecycle
// controller watches.
func (n *node) renew(ctx context.Context) error {
	leases := n.agent.cfg.Client.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		l, err := leases.Get(ctx, n.cfg.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		l.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
		_, err = leases.Update(ctx, l, metav1.UpdateOptions{})
		return err
	})
}

// heartbeats renews the Leases of all nodes that are up, every
// HeartbeatInterval, until the agent stops.
func (a *Agent) heartbeats() {
	defer a.wg.Done()
	t := time.NewTicker(a.cfg.HeartbeatInterval)
	defer t.Stop()
	for {
		select {
		case <-a.stop:
			return
		case <-t.C:
		}
		for _, name := range a.order {
			n := a.nodes[name]
			if n.isDown() {
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), a.cfg.HeartbeatInterval*2)
			if err := n.renew(ctx); err != nil {
				a.log.Warn("renew node lease", "node", name, "err", err)
			}
			cancel()
		}
	}
}

func (a *Agent) node(name string) (*node, error) {
	n := a.nodes[name]
	if n == nil {
		return nil, fmt.Errorf("%w: %q", ErrUnknownNode, name)
	}
	return n, nil
}

// Cordon marks a node unschedulable, as kubectl cordon does. Pods already on
// it keep running.
func (a *Agent) Cordon(ctx context.Context, name string) error {
	return a.setUnschedulable(ctx, name, true)
}

// Uncordon makes a node schedulable again.
func (a *Agent) Uncordon(ctx context.Context, name string) error {
	return a.setUnschedulable(ctx, name, false)
}

func (a *Agent) setUnschedulable(ctx context.Context, name string, v bool) error {
	if _, err := a.node(name); err != nil {
		return err
	}
	patch := fmt.Sprintf(`{"spec":{"unschedulable":%t}}`, v)
	_, err := a.cfg.Client.CoreV1().Nodes().Patch(ctx, name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{})
	if err != nil {
		return fmt.Errorf("cordon %s: %w", name, err)
	}
	return nil
}

// Down takes a node down as a power loss would: its container processes are
// killed (SIGKILL) and it stops renewing its Lease and reporting pod status.
// The real node lifecycle controller then marks the node NotReady (Unknown)
// and its pods not ready after --node-monitor-grace-period; pods deleted
// meanwhile stay Terminating until the node is back or they are force
// deleted. Down returns once the processes are gone.
func (a *Agent) Down(_ context.Context, name string) error {
	n, err := a.node(name)
	if err != nil {
		return err
	}
	n.mu.Lock()
	n.down = true
	n.mu.Unlock()
	for _, w := range a.allWorkers() {
		if w.node == n {
			w.stopContainers(true)
		}
	}
	a.log.Info("node down", "node", name)
	return nil
}

// Up brings a node back: it reports Ready again, renews its Lease, and
// restarts the containers of the pods still bound to it, as a rebooted
// kubelet would.
func (a *Agent) Up(ctx context.Context, name string) error {
	n, err := a.node(name)
	if err != nil {
		return err
	}
	n.mu.Lock()
	n.down = false
	n.mu.Unlock()
	if err := n.postStatus(ctx); err != nil {
		return err
	}
	if err := n.renew(ctx); err != nil {
		return fmt.Errorf("node %s: renew lease: %w", name, err)
	}
	for _, w := range a.allWorkers() {
		if w.node == n {
			w.resetBackoff()
			w.wake()
		}
	}
	a.log.Info("node up", "node", name)
	return nil
}
