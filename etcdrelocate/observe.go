package etcdrelocate

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Observe reads the tenant etcd named cluster in namespace: the layout and
// the Kubernetes objects through client-go, the members, their Status,
// HashKV and the alarms through etcd client v3, and joins them by peer URL
// (never by name). A namespace without a recognisable layout yields a State
// with LayoutUnknown, which Preflight refuses.
func (r *Relocator) Observe(ctx context.Context, namespace, cluster string) (*State, error) {
	if err := r.usable(); err != nil {
		return nil, err
	}
	if cluster == "" {
		cluster = DefaultCluster
	}
	kv, err := r.observeKube(ctx, namespace, cluster)
	if err != nil {
		return nil, err
	}
	s := &State{Namespace: namespace, Cluster: cluster, Layout: kv.layout}
	if kv.layout == LayoutUnknown {
		s.ObservedAt = time.Now()
		return s, nil
	}
	s.Workload, s.Nodes, s.PDB, s.Certificates, s.DefragJobs, s.Checkpoint = kv.workload, kv.nodes, kv.pdb, kv.certs, kv.defrag, kv.checkpoint
	s.Lease = kv.lease
	conn, err := r.connector(ctx, namespace)
	if err != nil {
		return nil, err
	}
	defer conn.close()
	cli, err := conn.client(r.endpoints(kv, namespace)...)
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	ev, err := observeEtcd(ctx, conn.ops(cli, r.log, r.t.Membership))
	if err != nil {
		return nil, err
	}
	s.Members, s.Alarms, s.HashRevision = ev.members, ev.alarms, ev.hashRev
	join(s, kv)
	sortMembers(s.Members)
	s.ObservedAt = time.Now()
	return s, nil
}

// endpoints returns Config.Endpoints, else the client URLs of the pods.
func (r *Relocator) endpoints(kv *kubeView, namespace string) []string {
	if len(r.cfg.Endpoints) > 0 {
		return r.cfg.Endpoints
	}
	var eps []string
	for _, p := range kv.pods {
		eps = append(eps, PodClientURL(p.Name, kv.service, namespace))
	}
	return eps
}

// join attaches every pod (and its claim, volume and EtcdMember) to the etcd
// member with the pod's peer URL.
func join(s *State, kv *kubeView) {
	for i := range kv.pods {
		p := &kv.pods[i]
		m := s.memberByPeerURL(expectedPeerURL(p, kv.service))
		if m == nil {
			continue
		}
		m.Pod = podOf(p)
		m.EtcdMember = kv.etcdMembers[p.Name]
		if pvc := kv.claims[m.Pod.ClaimName]; pvc != nil {
			m.PVC = pvcOf(pvc)
			if pv := kv.volumes[pvc.Spec.VolumeName]; pv != nil {
				m.PV = pvOf(pv)
			}
		}
	}
}

func podOf(p *corev1.Pod) *Pod {
	out := &Pod{Name: p.Name, UID: string(p.UID), Node: p.Spec.NodeName, Phase: string(p.Status.Phase),
		Deleting: p.DeletionTimestamp != nil, ClaimName: claimOf(p),
		Scheduling: Scheduling{NodeSelector: p.Spec.NodeSelector, Affinity: p.Spec.Affinity, Tolerations: p.Spec.Tolerations}}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			out.Ready = c.Status == corev1.ConditionTrue
		}
	}
	for _, cs := range p.Status.ContainerStatuses {
		out.Restarts += cs.RestartCount
	}
	return out
}

func pvcOf(c *corev1.PersistentVolumeClaim) *PVC {
	out := &PVC{Name: c.Name, UID: string(c.UID), Phase: string(c.Status.Phase), VolumeName: c.Spec.VolumeName,
		Deleting: c.DeletionTimestamp != nil, SelectedNode: c.Annotations[annSelectedNode]}
	if c.Spec.StorageClassName != nil {
		out.StorageClass = *c.Spec.StorageClassName
	}
	if q, ok := c.Spec.Resources.Requests[corev1.ResourceStorage]; ok {
		out.Request = q.String()
	}
	return out
}

func pvOf(v *corev1.PersistentVolume) *PV {
	return &PV{Name: v.Name, UID: string(v.UID), Phase: string(v.Status.Phase),
		ReclaimPolicy: string(v.Spec.PersistentVolumeReclaimPolicy), Node: volumeNode(v)}
}

// volumeNode returns the node a volume's required node affinity pins it to
// (kubernetes.io/hostname In [node]), "" if none.
func volumeNode(v *corev1.PersistentVolume) string {
	if v.Spec.NodeAffinity == nil || v.Spec.NodeAffinity.Required == nil {
		return ""
	}
	for _, t := range v.Spec.NodeAffinity.Required.NodeSelectorTerms {
		for _, e := range t.MatchExpressions {
			if e.Key == corev1.LabelHostname && e.Operator == corev1.NodeSelectorOpIn && len(e.Values) == 1 {
				return e.Values[0]
			}
		}
	}
	return ""
}

// annSelectedNode is the annotation the scheduler (or we) set on a claim to
// have it provisioned on a node.
const annSelectedNode = "volume.kubernetes.io/selected-node"
