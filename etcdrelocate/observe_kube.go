package etcdrelocate

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The operators' resources.
var (
	gvrEtcdCluster = schema.GroupVersionResource{Group: GroupCozystack, Version: "v1alpha2", Resource: "etcdclusters"}
	gvrEtcdMember  = schema.GroupVersionResource{Group: GroupCozystack, Version: "v1alpha2", Resource: "etcdmembers"}
)

// kubeView is Kubernetes' side of a State.
type kubeView struct {
	layout   Layout
	workload Workload
	service  string
	pods     []corev1.Pod
	// etcdMembers maps a pod name to its EtcdMember (v1alpha2).
	etcdMembers map[string]string
	claims      map[string]*corev1.PersistentVolumeClaim
	volumes     map[string]*corev1.PersistentVolume
	nodes       []Node
	pdb         *PDB
	certs       []Certificate
	defrag      []string
	checkpoint  *Checkpoint
	lease       *LeaseInfo
}

// observeKube reads the namespace's objects and recognises the layout.
func (r *Relocator) observeKube(ctx context.Context, ns, cluster string) (*kubeView, error) {
	kv := &kubeView{etcdMembers: map[string]string{}, claims: map[string]*corev1.PersistentVolumeClaim{},
		volumes: map[string]*corev1.PersistentVolume{}}
	found, err := r.observeV1alpha2(ctx, ns, cluster, kv)
	if err != nil {
		return nil, err
	}
	if !found {
		if found, err = r.observeStatefulSet(ctx, ns, cluster, kv); err != nil {
			return nil, err
		}
	}
	if !found {
		return kv, nil
	}
	for _, step := range []func(context.Context, string, string, *kubeView) error{
		r.observeStorage, r.observeNodes, r.observePDB, r.observeCerts, r.observeJobs, r.observeCheckpoint, r.observeLease,
	} {
		if err := step(ctx, ns, cluster, kv); err != nil {
			return nil, err
		}
	}
	return kv, nil
}

func (r *Relocator) observeStatefulSet(ctx context.Context, ns, cluster string, kv *kubeView) (bool, error) {
	sts, err := r.cfg.Kube.AppsV1().StatefulSets(ns).Get(ctx, cluster, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("get statefulset %s/%s: %w", ns, cluster, err)
	}
	kv.layout, kv.service = LayoutStatefulSet, sts.Spec.ServiceName
	replicas := 1
	if sts.Spec.Replicas != nil {
		replicas = int(*sts.Spec.Replicas)
	}
	kv.workload = Workload{Kind: "StatefulSet", Name: sts.Name, Replicas: replicas, ReadyReplicas: int(sts.Status.ReadyReplicas),
		CurrentRevision: sts.Status.CurrentRevision, UpdateRevision: sts.Status.UpdateRevision, ServiceName: sts.Spec.ServiceName}
	if cm, err := r.cfg.Kube.CoreV1().ConfigMaps(ns).Get(ctx, clusterStateConfigMap, metav1.GetOptions{}); err == nil {
		kv.workload.InitialClusterState = cm.Data["ETCD_INITIAL_CLUSTER_STATE"]
	}
	sel, err := metav1.LabelSelectorAsSelector(sts.Spec.Selector)
	if err != nil {
		return false, fmt.Errorf("statefulset %s/%s selector: %w", ns, cluster, err)
	}
	pods, err := r.cfg.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return false, fmt.Errorf("list pods: %w", err)
	}
	kv.pods = pods.Items
	return true, nil
}

func (r *Relocator) observeV1alpha2(ctx context.Context, ns, cluster string, kv *kubeView) (bool, error) {
	if r.cfg.Dynamic == nil {
		return false, nil
	}
	ec, err := r.cfg.Dynamic.Resource(gvrEtcdCluster).Namespace(ns).Get(ctx, cluster, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("get etcdcluster %s/%s: %w", ns, cluster, err)
	}
	kv.layout, kv.service = LayoutEtcdMember, cluster
	replicas, found, _ := unstructured.NestedInt64(ec.Object, "spec", "replicas")
	if !found {
		replicas = 3
	}
	ready, _, _ := unstructured.NestedInt64(ec.Object, "status", "readyMembers")
	kv.workload = Workload{Kind: "EtcdCluster", Name: cluster, Replicas: int(replicas), ReadyReplicas: int(ready),
		Progressing: conditionTrue(ec, "Progressing")}
	sel := labelV1alpha2Cluster + "=" + cluster
	members, err := r.cfg.Dynamic.Resource(gvrEtcdMember).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return false, fmt.Errorf("list etcdmembers: %w", err)
	}
	for _, m := range members.Items {
		pod, _, _ := unstructured.NestedString(m.Object, "status", "podName")
		if pod == "" {
			pod = m.GetName()
		}
		kv.etcdMembers[pod] = m.GetName()
		if svc := m.GetAnnotations()[annotationHeadlessService]; svc != "" {
			kv.layout, kv.service = LayoutMigrated, svc
		}
	}
	kv.workload.ServiceName = kv.service
	kv.workload.Operator = operatorStateOf(ec, members.Items)
	pods, err := r.cfg.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return false, fmt.Errorf("list pods: %w", err)
	}
	kv.pods = pods.Items
	return true, nil
}

func conditionTrue(u *unstructured.Unstructured, typ string) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == typ {
			return m["status"] == "True"
		}
	}
	return false
}

func (r *Relocator) observeStorage(ctx context.Context, ns, _ string, kv *kubeView) error {
	for _, p := range kv.pods {
		claim := claimOf(&p)
		if claim == "" {
			continue
		}
		pvc, err := r.cfg.Kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, claim, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("get claim %s: %w", claim, err)
		}
		kv.claims[claim] = pvc
		if pvc.Spec.VolumeName == "" {
			continue
		}
		pv, err := r.cfg.Kube.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("get volume %s: %w", pvc.Spec.VolumeName, err)
		}
		kv.volumes[pv.Name] = pv
	}
	return nil
}

// claimOf returns the claim of the pod's data volume: the one mounted at
// etcd's data directory, else the first claim.
func claimOf(p *corev1.Pod) string {
	first := ""
	for _, v := range p.Spec.Volumes {
		if v.PersistentVolumeClaim == nil {
			continue
		}
		if v.Name == "data" {
			return v.PersistentVolumeClaim.ClaimName
		}
		if first == "" {
			first = v.PersistentVolumeClaim.ClaimName
		}
	}
	return first
}

func (r *Relocator) observeNodes(ctx context.Context, _, _ string, kv *kubeView) error {
	nodes, err := r.cfg.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list nodes: %w", err)
	}
	for _, n := range nodes.Items {
		ready := false
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				ready = c.Status == corev1.ConditionTrue
			}
		}
		kv.nodes = append(kv.nodes, Node{Name: n.Name, Ready: ready, Unschedulable: n.Spec.Unschedulable, Labels: n.Labels, Taints: n.Spec.Taints})
	}
	return nil
}

func (r *Relocator) observePDB(ctx context.Context, ns, _ string, kv *kubeView) error {
	if len(kv.pods) == 0 {
		return nil
	}
	pdbs, err := r.cfg.Kube.PolicyV1().PodDisruptionBudgets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list pod disruption budgets: %w", err)
	}
	for _, p := range pdbs.Items {
		sel, err := metav1.LabelSelectorAsSelector(p.Spec.Selector)
		if err != nil || sel.Empty() || !sel.Matches(labels.Set(kv.pods[0].Labels)) {
			continue
		}
		kv.pdb = &PDB{Name: p.Name, DisruptionsAllowed: int(p.Status.DisruptionsAllowed),
			CurrentHealthy: int(p.Status.CurrentHealthy), DesiredHealthy: int(p.Status.DesiredHealthy)}
		return nil
	}
	return nil
}

func (r *Relocator) observeCerts(ctx context.Context, ns, _ string, kv *kubeView) error {
	for _, name := range []string{ServerTLSSecret, PeerTLSSecret} {
		s, err := r.cfg.Kube.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("get secret %s: %w", name, err)
		}
		c, err := parseCertificate(name, s.Data["tls.crt"])
		if err != nil {
			return err
		}
		kv.certs = append(kv.certs, c)
	}
	return nil
}

func (r *Relocator) observeJobs(ctx context.Context, ns, _ string, kv *kubeView) error {
	jobs, err := r.cfg.Kube.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list jobs: %w", err)
	}
	for _, j := range jobs.Items {
		if j.Status.Active > 0 && strings.Contains(j.Name, "defrag") {
			kv.defrag = append(kv.defrag, j.Name)
		}
	}
	return nil
}

func (r *Relocator) observeCheckpoint(ctx context.Context, ns, cluster string, kv *kubeView) error {
	cm, err := r.cfg.Kube.CoreV1().ConfigMaps(ns).Get(ctx, checkpointName(cluster), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get checkpoint: %w", err)
	}
	cp, err := DecodeCheckpoint([]byte(cm.Data[checkpointKey]))
	if err != nil {
		return fmt.Errorf("configmap %s/%s: %w", ns, cm.Name, err)
	}
	kv.checkpoint = cp
	return nil
}

// expectedPeerURL returns the peer URL a pod advertises: its
// --initial-advertise-peer-urls flag (or ETCD_INITIAL_ADVERTISE_PEER_URLS)
// with $(VAR) references expanded, else the layout's naming convention.
func expectedPeerURL(p *corev1.Pod, service string) string {
	for _, c := range p.Spec.Containers {
		env := map[string]string{}
		for _, e := range c.Env {
			switch {
			case e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.name":
				env[e.Name] = p.Name
			case e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace":
				env[e.Name] = p.Namespace
			case e.ValueFrom == nil:
				env[e.Name] = e.Value
			}
		}
		for _, a := range append(append([]string(nil), c.Command...), c.Args...) {
			if v, ok := strings.CutPrefix(a, "--initial-advertise-peer-urls="); ok {
				return strings.Split(expand(v, env), ",")[0]
			}
		}
		if v, ok := env["ETCD_INITIAL_ADVERTISE_PEER_URLS"]; ok {
			return strings.Split(expand(v, env), ",")[0]
		}
	}
	return PodPeerURL(p.Name, service, p.Namespace)
}

// expand replaces $(VAR) with env[VAR], as the kubelet does.
func expand(s string, env map[string]string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "$(")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		j := strings.Index(s[i:], ")")
		if j < 0 {
			b.WriteString(s)
			return b.String()
		}
		name := s[i+2 : i+j]
		b.WriteString(s[:i])
		if v, ok := env[name]; ok {
			b.WriteString(v)
		} else {
			b.WriteString(s[i : i+j+1])
		}
		s = s[i+j+1:]
	}
}
