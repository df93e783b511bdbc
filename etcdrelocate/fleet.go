package etcdrelocate

import (
	"context"
	"fmt"
	"sort"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
)

// ClusterRef names one tenant etcd.
type ClusterRef struct {
	Namespace string `json:"namespace"`
	Cluster   string `json:"cluster"`
}

func (c ClusterRef) String() string { return c.Namespace + "/" + c.Cluster }

// Fleet is one observation of every tenant etcd of a management cluster,
// with its nodes: what NodeReport, PlanEvacuationFor and PlanSpreadFor
// read. ObserveFleet fills it in; tests can build one by hand.
type Fleet struct {
	// Nodes are the cluster's nodes, by name.
	Nodes []Node
	// Clusters are the tenant etcds, by namespace then name.
	Clusters []FleetCluster
	// ObservedAt is when the observation finished.
	ObservedAt time.Time
}

// FleetCluster is one tenant etcd of a Fleet: its State, or why it could
// not be observed.
type FleetCluster struct {
	ClusterRef
	// State is the observation; nil when Err is set.
	State *State
	// Err says why the cluster could not be observed (etcd unreachable,
	// its Secrets unreadable).
	Err error
}

// node returns the fleet's node of that name, or nil.
func (f *Fleet) node(name string) *Node { return nodeNamed(f.Nodes, name) }

// Clusters lists every tenant etcd of the management cluster: each
// v1alpha2 EtcdCluster (etcd-operator.cozystack.io) and each StatefulSet
// named DefaultCluster of the aenix layout, by namespace then name.
func (r *Relocator) Clusters(ctx context.Context) ([]ClusterRef, error) {
	if err := r.usable(); err != nil {
		return nil, err
	}
	seen := map[ClusterRef]bool{}
	if r.cfg.Dynamic != nil {
		list, err := r.cfg.Dynamic.Resource(gvrEtcdCluster).List(ctx, metav1.ListOptions{})
		switch {
		case err == nil:
			for _, ec := range list.Items {
				seen[ClusterRef{Namespace: ec.GetNamespace(), Cluster: ec.GetName()}] = true
			}
		case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
			// The v1alpha2 operator is not installed.
		default:
			return nil, fmt.Errorf("list etcdclusters: %w", err)
		}
	}
	sts, err := r.cfg.Kube.AppsV1().StatefulSets("").List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("metadata.name", DefaultCluster).String()})
	if err != nil {
		return nil, fmt.Errorf("list statefulsets: %w", err)
	}
	for _, s := range sts.Items {
		seen[ClusterRef{Namespace: s.Namespace, Cluster: s.Name}] = true
	}
	out := make([]ClusterRef, 0, len(seen))
	for c := range seen {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out, nil
}

// ObserveFleet observes every tenant etcd (Clusters, then Observe for
// each) and the nodes. A cluster that cannot be observed is kept with its
// error, so one unreachable tenant hides none of the others.
func (r *Relocator) ObserveFleet(ctx context.Context) (*Fleet, error) {
	refs, err := r.Clusters(ctx)
	if err != nil {
		return nil, err
	}
	kv := &kubeView{}
	if err := r.observeNodes(ctx, "", "", kv); err != nil {
		return nil, err
	}
	f := &Fleet{Nodes: kv.nodes}
	sort.Slice(f.Nodes, func(i, j int) bool { return f.Nodes[i].Name < f.Nodes[j].Name })
	for _, c := range refs {
		s, err := r.Observe(ctx, c.Namespace, c.Cluster)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		f.Clusters = append(f.Clusters, FleetCluster{ClusterRef: c, State: s, Err: err})
	}
	f.ObservedAt = time.Now()
	return f, nil
}
