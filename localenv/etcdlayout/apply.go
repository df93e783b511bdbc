package etcdlayout

import (
	"context"
	"fmt"
	"time"

	"github.com/cozystack/tenantkit/internal/crds"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// clients are the API clients a layout needs.
type clients struct {
	kube kubernetes.Interface
	dyn  dynamic.Interface
}

func newClients(rc *rest.Config) (*clients, error) {
	kube, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	return &clients{kube: kube, dyn: dyn}, nil
}

// EtcdCluster returns the etcd.aenix.io/v1alpha1 EtcdCluster as the
// Cozystack ≤ v1.5 chart renders it (packages/extra/etcd).
func (l *V1alpha1) EtcdCluster() *unstructured.Unstructured {
	cfg := l.Config
	storage := map[string]any{"resources": map[string]any{"requests": map[string]any{"storage": cfg.Size.String()}}}
	if cfg.StorageClass != "" {
		storage["storageClassName"] = cfg.StorageClass
	}
	quota := int64(float64(cfg.Size.Value()) * 0.95)
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "etcd.aenix.io/v1alpha1",
		"kind":       "EtcdCluster",
		"metadata":   map[string]any{"name": clusterName, "namespace": cfg.Namespace},
		"spec": map[string]any{
			"options": map[string]any{
				"quota-backend-bytes":       fmt.Sprint(quota),
				"auto-compaction-mode":      "periodic",
				"auto-compaction-retention": "5m",
				"snapshot-count":            "10000",
			},
			"replicas": int64(cfg.Replicas),
			"storage":  map[string]any{"volumeClaimTemplate": map[string]any{"spec": storage}},
			"security": map[string]any{"tls": map[string]any{
				"peerTrustedCASecret": SecretPeerCA, "peerSecret": SecretPeer, "serverSecret": SecretServer,
				"clientTrustedCASecret": SecretCA, "clientSecret": SecretClient,
			}},
			"podTemplate": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"cozystack.io/service": "etcd"}},
				"spec": map[string]any{
					"containers": []any{map[string]any{
						"name":  "etcd",
						"ports": []any{map[string]any{"name": "metrics", "containerPort": int64(metricsPort), "protocol": "TCP"}},
					}},
					"topologySpreadConstraints": []any{map[string]any{
						"maxSkew": int64(1), "topologyKey": corev1.LabelHostname,
						"whenUnsatisfiable": string(spread(cfg.StrictSpread)[0].WhenUnsatisfiable),
						"labelSelector":     map[string]any{"matchLabels": map[string]any{"app.kubernetes.io/instance": clusterName}},
					}},
				},
			},
			"podDisruptionBudgetTemplate": map[string]any{},
		},
	}}
}

// Objects returns the layout's objects in the order Apply creates them
// (without the EtcdCluster, see EtcdCluster).
func (l *V1alpha1) Objects() []runtime.Object {
	out := []runtime.Object{l.Namespace}
	for _, s := range l.Secrets {
		out = append(out, s)
	}
	return append(out, l.ClusterState, l.Headless, l.Client, l.PDB, l.StatefulSet)
}

// Apply creates the layout through the apiserver: the EtcdCluster CRD if
// missing, the namespace, the EtcdCluster, the Secrets, and what the
// operator generates (ConfigMap, Services, PDB, StatefulSet last), each
// controlled by the EtcdCluster as the operator sets it. Objects that exist
// already are left alone, so Apply is safe to re-run.
func (l *V1alpha1) Apply(ctx context.Context, rc *rest.Config) error {
	c, err := newClients(rc)
	if err != nil {
		return err
	}
	if err := crds.Install(ctx, rc, aenixCRD.Definition()); err != nil {
		return err
	}
	ns := l.Config.Namespace
	if err := createNamespace(ctx, c.kube, ns); err != nil {
		return err
	}
	ec, err := c.dyn.Resource(aenixEtcdClusters).Namespace(ns).Create(ctx, l.EtcdCluster(), metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		ec, err = c.dyn.Resource(aenixEtcdClusters).Namespace(ns).Get(ctx, clusterName, metav1.GetOptions{})
	}
	if err != nil {
		return fmt.Errorf("create EtcdCluster: %w", err)
	}
	owner := []metav1.OwnerReference{*metav1.NewControllerRef(ec, aenixCRD.GVR().GroupVersion().WithKind(aenixCRD.Kind))}
	cs := c.kube
	for _, s := range l.Secrets {
		if _, err := cs.CoreV1().Secrets(ns).Create(ctx, s, metav1.CreateOptions{}); ignoreExists(err) != nil {
			return fmt.Errorf("create secret %s: %w", s.Name, err)
		}
	}
	steps := []struct {
		what   string
		meta   *metav1.ObjectMeta
		create func() error
	}{
		{"configmap", &l.ClusterState.ObjectMeta, func() error {
			_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, l.ClusterState, metav1.CreateOptions{})
			return err
		}},
		{"service", &l.Headless.ObjectMeta, func() error {
			_, err := cs.CoreV1().Services(ns).Create(ctx, l.Headless, metav1.CreateOptions{})
			return err
		}},
		{"service", &l.Client.ObjectMeta, func() error {
			_, err := cs.CoreV1().Services(ns).Create(ctx, l.Client, metav1.CreateOptions{})
			return err
		}},
		{"pdb", &l.PDB.ObjectMeta, func() error {
			_, err := cs.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, l.PDB, metav1.CreateOptions{})
			return err
		}},
		{"statefulset", &l.StatefulSet.ObjectMeta, func() error {
			_, err := cs.AppsV1().StatefulSets(ns).Create(ctx, l.StatefulSet, metav1.CreateOptions{})
			return err
		}},
	}
	for _, s := range steps {
		s.meta.OwnerReferences = owner
		if err := ignoreExists(s.create()); err != nil {
			return fmt.Errorf("create %s %s: %w", s.what, s.meta.Name, err)
		}
	}
	return nil
}

// createNamespace creates the namespace and its default ServiceAccount (the
// controller manager would create it a moment later; pods cannot be created
// before it exists when ServiceAccount admission is on).
func createNamespace(ctx context.Context, cs kubernetes.Interface, ns string) error {
	_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if ignoreExists(err) != nil {
		return fmt.Errorf("create namespace %s: %w", ns, err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns}}
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); ignoreExists(err) != nil {
		return fmt.Errorf("create default service account in %s: %w", ns, err)
	}
	return nil
}

func ignoreExists(err error) error {
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// WaitReady waits until all replicas are Ready, then does what the aenix
// operator does once its cluster has reached quorum: it switches
// etcd-cluster-state to ETCD_INITIAL_CLUSTER_STATE=existing (so members
// created later join instead of bootstrapping) and marks the EtcdCluster
// Ready. No operator runs in the local environment; this is the only part
// of its runtime behaviour the layout needs.
func (l *V1alpha1) WaitReady(ctx context.Context, rc *rest.Config) error {
	c, err := newClients(rc)
	if err != nil {
		return err
	}
	ns := l.Config.Namespace
	err = wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		sts, err := c.kube.AppsV1().StatefulSets(ns).Get(ctx, StatefulSetName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return sts.Status.ReadyReplicas == l.Config.Replicas, nil
	})
	if err != nil {
		return fmt.Errorf("wait for %d ready etcd members in %s: %w", l.Config.Replicas, ns, err)
	}
	patch := []byte(`{"data":{"ETCD_INITIAL_CLUSTER_STATE":"existing"}}`)
	if _, err := c.kube.CoreV1().ConfigMaps(ns).Patch(ctx, ClusterStateConfigMap, "application/merge-patch+json", patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("mark cluster state existing: %w", err)
	}
	now := time.Now().UTC().Format(time.RFC3339)
	status := fmt.Sprintf(`{"status":{"conditions":[`+
		`{"type":"Initialized","status":"True","reason":"InitializationComplete","lastTransitionTime":%q,"message":""},`+
		`{"type":"Ready","status":"True","reason":"StatefulSetReady","lastTransitionTime":%q,"message":""}]}}`, now, now)
	_, err = c.dyn.Resource(aenixEtcdClusters).Namespace(ns).Patch(ctx, clusterName, "application/merge-patch+json", []byte(status), metav1.PatchOptions{}, "status")
	if err != nil {
		return fmt.Errorf("mark EtcdCluster ready: %w", err)
	}
	return nil
}
