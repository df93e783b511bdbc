package backup

import (
	"context"
	"hash/maphash"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// RestoreTarget is the tenant cluster a restore goes to. PlanRestore and
// CheckRestore only read it: discovery, list and get.
type RestoreTarget struct {
	// Dynamic reads objects.
	Dynamic dynamic.Interface
	// Discovery resolves resource names and kinds, as Velero's discovery
	// helper does.
	Discovery discovery.DiscoveryInterface
}

// NewRestoreTarget returns the RestoreTarget for a cluster's REST config.
// It does no I/O.
func NewRestoreTarget(rc *rest.Config) (RestoreTarget, error) {
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return RestoreTarget{}, &ClusterError{Op: "config", Err: err}
	}
	disc, err := discovery.NewDiscoveryClientForConfig(rc)
	if err != nil {
		return RestoreTarget{}, &ClusterError{Op: "config", Err: err}
	}
	return RestoreTarget{Dynamic: dyn, Discovery: disc}, nil
}

// clusterView is what a plan reads from the cluster before the archive:
// the API mapping, the namespaces, and a hash of each object that a
// backed-up item could collide with.
type clusterView struct {
	target     RestoreTarget
	mapper     meta.RESTMapper
	namespaces map[string]bool
	seed       maphash.Seed
	live       map[string]liveObject // liveKey -> object
	keep       bool                  // keep the normalized objects (CheckRestore)
	served     map[string]schema.GroupVersionResource
	kept       int // objects kept whole
	// nodePorts: node port -> "<namespace>/<name>" of the Service holding
	// it; accounts: namespace -> its service accounts (readExtras).
	nodePorts map[int64]string
	accounts  map[string]map[string]bool
}

// maxKeptLive bounds the listed objects a plan keeps whole (a few MiB).
const maxKeptLive = 2000

type liveObject struct {
	hash uint64
	obj  map[string]any // normalized; only with keep
}

func liveKey(gr, ns, name string) string { return gr + "\x00" + ns + "\x00" + name }

// newClusterView reads discovery and the namespaces.
func newClusterView(ctx context.Context, t RestoreTarget, keep bool) (*clusterView, error) {
	if t.Dynamic == nil || t.Discovery == nil {
		return nil, &ClusterError{Op: "config", Err: errNoTarget}
	}
	// One discovery read: the shortcut expander would otherwise ask the
	// server again for every name it resolves.
	disc := memory.NewMemCacheClient(t.Discovery)
	groups, err := restmapper.GetAPIGroupResources(disc)
	if err != nil {
		return nil, &ClusterError{Op: "discovery", Err: err}
	}
	cv := &clusterView{target: t, namespaces: map[string]bool{}, seed: maphash.MakeSeed(),
		live: map[string]liveObject{}, keep: keep, served: map[string]schema.GroupVersionResource{},
		mapper: restmapper.NewShortcutExpander(restmapper.NewDiscoveryRESTMapper(groups), disc, func(string) {})}
	nsGVR := schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	err = cv.list(ctx, nsGVR, "", func(u *unstructured.Unstructured) { cv.namespaces[u.GetName()] = true })
	if err != nil {
		return nil, err
	}
	return cv, nil
}

// resolve maps a resource as a user writes it to "<resource>[.<group>]",
// or returns it unchanged (Velero's GetResourceIncludesExcludes).
func (cv *clusterView) resolve(name string) string {
	gvr, err := cv.mapper.ResourceFor(schema.ParseGroupResource(name).WithVersion(""))
	if err != nil {
		return name
	}
	return gvr.GroupResource().String()
}

// mapping returns the resource serving a "<group>/<version>/<Kind>" key of
// the resource list, and whether the cluster serves it.
func (cv *clusterView) mapping(gvkKey string) (*meta.RESTMapping, bool) {
	i := strings.LastIndex(gvkKey, "/")
	if i < 0 {
		return nil, false
	}
	gv, err := schema.ParseGroupVersion(gvkKey[:i])
	if err != nil {
		return nil, false
	}
	m, err := cv.mapper.RESTMapping(schema.GroupKind{Group: gv.Group, Kind: gvkKey[i+1:]}, gv.Version)
	if err != nil {
		return nil, false
	}
	return m, true
}

// index lists the objects of m in namespace ns ("" for cluster scope)
// and records each normalized object's hash.
func (cv *clusterView) index(ctx context.Context, m *meta.RESTMapping, ns string) error {
	gr := m.Resource.GroupResource().String()
	cv.served[gr] = m.Resource
	return cv.list(ctx, m.Resource, ns, func(u *unstructured.Unstructured) {
		obj := normalizeLive(u)
		h, err := objectHash(cv.seed, obj)
		if err != nil {
			return
		}
		lo := liveObject{hash: h}
		// Service accounts are merged, not compared; a bounded number of
		// others are kept so that naming their differences needs no get.
		if cv.keep || gr == "serviceaccounts" || cv.kept < maxKeptLive {
			cv.kept++

			lo.obj = obj
		}
		cv.live[liveKey(gr, u.GetNamespace(), u.GetName())] = lo
	})
}

// normalizeLive is what Velero does to the in-cluster object before
// comparing (restore.go:1864-1874).
func normalizeLive(u *unstructured.Unstructured) map[string]any {
	resetMetadataAndStatus(u.Object)
	addRestoreLabels(u)
	return u.Object
}

// list pages through a list (500 a page).
func (cv *clusterView) list(ctx context.Context, gvr schema.GroupVersionResource, ns string, fn func(*unstructured.Unstructured)) error {
	opts := metav1.ListOptions{Limit: 500}
	for {
		l, err := cv.target.Dynamic.Resource(gvr).Namespace(ns).List(ctx, opts)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return &ClusterError{Op: "list", Resource: gvr.GroupResource().String(), Namespace: ns, Err: err}
		}
		for i := range l.Items {
			fn(&l.Items[i])
		}
		if opts.Continue = l.GetContinue(); opts.Continue == "" {
			return nil
		}
	}
}

// get reads one object, normalized, or nil when it is gone.
func (cv *clusterView) get(ctx context.Context, gr, ns, name string) (map[string]any, error) {
	gvr, ok := cv.served[gr]
	if !ok {
		return nil, nil
	}
	u, err := cv.target.Dynamic.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &ClusterError{Op: "get", Resource: gr, Namespace: ns, Err: err}
	}
	return normalizeLive(u), nil
}
