package etcdlayout

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// memberLabels are the operator's labels on a member's Pod and PVC.
func memberLabels(member string) map[string]string {
	return map[string]string{
		"app.kubernetes.io/name":       "etcd",
		"app.kubernetes.io/instance":   clusterName,
		"app.kubernetes.io/managed-by": "etcd-operator",
		"app.kubernetes.io/component":  member,
		labelCluster:                   clusterName,
	}
}

func controllerRef(u *unstructured.Unstructured) []metav1.OwnerReference {
	return []metav1.OwnerReference{*metav1.NewControllerRef(u, schema.FromAPIVersionAndKind(u.GetAPIVersion(), u.GetKind()))}
}

// ensureClusterObjects creates the headless Service named after the
// cluster (the PDB follows the voters in updateStatus).
func (o *Operator) ensureClusterObjects(ctx context.Context, cluster *unstructured.Unstructured) error {
	ns := o.cfg.Namespace
	sel := map[string]string{labelCluster: clusterName}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: clusterName, Namespace: ns, OwnerReferences: controllerRef(cluster)},
		Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, PublishNotReadyAddresses: true, Selector: sel,
			Ports: []corev1.ServicePort{
				{Name: "client", Port: clientPort, TargetPort: intstr.FromInt32(clientPort)},
				{Name: "peer", Port: peerPort, TargetPort: intstr.FromInt32(peerPort)},
			}},
	}
	if _, err := o.c.kube.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); ignoreExists(err) != nil {
		return err
	}
	return nil
}

// createMember creates an EtcdMember named etcd-<random> (create, then
// patch: the seed's initial cluster is itself, known once the name is).
func (o *Operator) createMember(ctx context.Context, cluster *unstructured.Unstructured, seed bool) (string, error) {
	ns := o.cfg.Namespace
	spec := observed(cluster)
	token, _, _ := unstructured.NestedString(cluster.Object, "status", "clusterToken")
	if token == "" {
		token = ns + "-" + clusterName + "-" + string(cluster.GetUID())
		if err := o.patchStatus(ctx, etcdClusters, clusterName, map[string]any{"clusterToken": token}); err != nil {
			return "", err
		}
	}
	m := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": EtcdMembers.GroupVersion().String(), "kind": "EtcdMember",
		"metadata": map[string]any{"generateName": clusterName + "-", "namespace": ns,
			"labels": map[string]any{labelCluster: clusterName}, "finalizers": []any{memberFinalizer}},
		"spec": map[string]any{
			"clusterName": clusterName, "version": spec["version"], "storage": spec["storage"],
			"options": spec["options"], "affinity": spec["affinity"],
			"topologySpreadConstraints": spec["topologySpreadConstraints"],
			"additionalMetadata":        spec["additionalMetadata"], "bootstrap": seed, "initialCluster": "", "clusterToken": token, "replicas": int64(1),
			"tls": map[string]any{"clientServerSecretRef": map[string]any{"name": SecretServer}, "clientMTLS": true,
				"peerSecretRef": map[string]any{"name": SecretPeer}},
		},
	}}
	m.SetOwnerReferences(controllerRef(cluster))
	created, err := o.c.dyn.Resource(EtcdMembers).Namespace(ns).Create(ctx, m, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("create member: %w", err)
	}
	name := created.GetName()
	o.log.Info("member created", "namespace", ns, "member", name, "seed", seed)
	if seed {
		patch := fmt.Sprintf(`{"spec":{"initialCluster":%q}}`, name+"="+MemberPeerURL(ns, name))
		_, err = o.c.dyn.Resource(EtcdMembers).Namespace(ns).Patch(ctx, name, "application/merge-patch+json", []byte(patch), metav1.PatchOptions{})
	}
	return name, err
}

// ensureMemberObjects creates a member's PVC and Pod if missing, keeps the
// Pod's role label in line with status.isVoter and reports the Pod in the
// member's status.
func (o *Operator) ensureMemberObjects(ctx context.Context, m member, bootstrapping bool) error {
	ns := o.cfg.Namespace
	size, _, _ := unstructured.NestedString(m.obj.Object, "spec", "storage", "size")
	class, _, _ := unstructured.NestedString(m.obj.Object, "spec", "storage", "storageClassName")
	q, err := resource.ParseQuantity(size)
	if err != nil {
		return fmt.Errorf("storage size %q: %w", size, err)
	}
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data-" + m.name, Namespace: ns, Labels: memberLabels(m.name), OwnerReferences: controllerRef(m.obj)},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: q}}},
	}
	if class != "" {
		pvc.Spec.StorageClassName = &class
	}
	if _, err := o.c.kube.CoreV1().PersistentVolumeClaims(ns).Create(ctx, pvc, metav1.CreateOptions{}); ignoreExists(err) != nil {
		return err
	}
	state := "existing"
	if m.bootstrap && bootstrapping {
		state = "new"
	}
	pod, err := o.memberPod(m, state)
	if err != nil {
		return err
	}
	cur, err := o.c.kube.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	if ignoreExists(err) != nil {
		return err
	}
	if err != nil {
		if cur, err = o.c.kube.CoreV1().Pods(ns).Get(ctx, m.name, metav1.GetOptions{}); err != nil {
			return err
		}
	}
	if m.isVoter && cur.Labels[labelRole] != roleVoter {
		patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, labelRole, roleVoter)
		if _, err := o.c.kube.CoreV1().Pods(ns).Patch(ctx, m.name, "application/merge-patch+json", []byte(patch), metav1.PatchOptions{}); err != nil {
			return err
		}
	}
	podUID, _, _ := unstructured.NestedString(m.obj.Object, "status", "podUID")
	if podUID == string(cur.UID) {
		return nil
	}
	sel := metav1.FormatLabelSelector(&metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/component": m.name}})
	return o.patchStatus(ctx, EtcdMembers, m.name, map[string]any{
		"podName": cur.Name, "podUID": string(cur.UID), "pvcName": pvc.Name, "replicas": int64(1), "selector": sel,
	})
}

// memberPod is the Pod the operator runs for a member: everything from the
// member's spec, which the member got from status.observed when it was
// created (affinity and topology spread included).
func (o *Operator) memberPod(m member, state string) (*corev1.Pod, error) {
	ns, name := o.cfg.Namespace, m.name
	version, _, _ := unstructured.NestedString(m.obj.Object, "spec", "version")
	token, _, _ := unstructured.NestedString(m.obj.Object, "spec", "clusterToken")
	labels := memberLabels(name)
	extra, _, _ := unstructured.NestedStringMap(m.obj.Object, "spec", "additionalMetadata", "labels")
	maps.Copy(labels, extra)
	if m.isVoter {
		labels[labelRole] = roleVoter
	}
	cmd := []string{"etcd",
		"--name=" + name,
		"--data-dir=/var/lib/etcd",
		"--listen-peer-urls=https://0.0.0.0:2380",
		"--listen-client-urls=https://0.0.0.0:2379",
		"--listen-metrics-urls=http://0.0.0.0:2381",
		"--advertise-client-urls=" + memberClientURL(ns, name),
		"--initial-advertise-peer-urls=" + MemberPeerURL(ns, name),
		"--initial-cluster=" + m.initialCluster,
		"--initial-cluster-token=" + token,
		"--initial-cluster-state=" + state,
		"--cert-file=/etc/etcd/tls/client/tls.crt", "--key-file=/etc/etcd/tls/client/tls.key",
		"--client-cert-auth", "--trusted-ca-file=/etc/etcd/tls/client/ca.crt",
		"--peer-cert-file=/etc/etcd/tls/peer/tls.crt", "--peer-key-file=/etc/etcd/tls/peer/tls.key",
		"--peer-client-cert-auth", "--peer-trusted-ca-file=/etc/etcd/tls/peer/ca.crt",
	}
	options, _, _ := unstructured.NestedMap(m.obj.Object, "spec", "options")
	for _, k := range sortedKeys(options) {
		cmd = append(cmd, "--"+kebab(k)+"="+fmt.Sprint(options[k]))
	}
	// The real operator's probes: readiness /health on the metrics port,
	// liveness a TCP connect to the peer port.
	readiness := &corev1.Probe{InitialDelaySeconds: 5, PeriodSeconds: 5, FailureThreshold: 3,
		ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/health", Port: intstr.FromInt32(metricsPort)}}}
	liveness := &corev1.Probe{InitialDelaySeconds: 15, PeriodSeconds: 10, FailureThreshold: 3,
		ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(peerPort)}}}
	secret := func(vol, name string) corev1.Volume {
		return corev1.Volume{Name: vol, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: name}}}
	}
	var placement struct {
		Affinity                  *corev1.Affinity                  `json:"affinity"`
		TopologySpreadConstraints []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints"`
	}
	spec, _, _ := unstructured.NestedMap(m.obj.Object, "spec")
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(spec, &placement); err != nil {
		return nil, fmt.Errorf("member %s placement: %w", name, err)
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels, OwnerReferences: controllerRef(m.obj)},
		Spec: corev1.PodSpec{
			Hostname: name, Subdomain: clusterName,
			Containers: []corev1.Container{{
				Name: "etcd", Image: "quay.io/coreos/etcd:v" + version, Command: cmd,
				Ports: []corev1.ContainerPort{{Name: "client", ContainerPort: clientPort}, {Name: "peer", ContainerPort: peerPort},
					{Name: "metrics", ContainerPort: metricsPort}},
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/var/lib/etcd"},
					{Name: "client-tls", MountPath: "/etc/etcd/tls/client", ReadOnly: true},
					{Name: "peer-tls", MountPath: "/etc/etcd/tls/peer", ReadOnly: true}},
				ReadinessProbe: readiness,
				LivenessProbe:  liveness,
			}},
			Volumes: []corev1.Volume{
				{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data-" + name}}},
				secret("client-tls", SecretServer), secret("peer-tls", SecretPeer),
			},
			Affinity:                  placement.Affinity,
			TopologySpreadConstraints: placement.TopologySpreadConstraints,
		},
	}, nil
}

// patchStatus merges fields into an object's status.
func (o *Operator) patchStatus(ctx context.Context, gvr schema.GroupVersionResource, name string, fields map[string]any) error {
	b, err := json.Marshal(map[string]any{"status": fields})
	if err != nil {
		return err
	}
	_, err = o.c.dyn.Resource(gvr).Namespace(o.cfg.Namespace).Patch(ctx, name, "application/merge-patch+json", b, metav1.PatchOptions{}, "status")
	return err
}

// kebab turns the EtcdCluster's camelCase option names into etcd flags
// (quotaBackendBytes → quota-backend-bytes).
func kebab(s string) string {
	var b strings.Builder
	for i, r := range s {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('-')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

func sortedKeys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }
