package cozystack

import (
	"context"

	"github.com/cozystack/tenantkit/etcdrelocate"
)

// EtcdRelocation returns the request to move member (a pod, EtcdMember,
// member name or hex ID) of the tenant etcd that stores the cluster to
// targetNode. Plan it with Relocator. It returns an error wrapping ErrNoEtcd
// when no tenant up the hierarchy runs an etcd.
func (cl *Cluster) EtcdRelocation(ctx context.Context, member, targetNode string) (etcdrelocate.Request, error) {
	ns, err := cl.EtcdNamespace(ctx)
	if err != nil {
		return etcdrelocate.Request{}, err
	}
	return etcdrelocate.Request{Namespace: ns, Member: member, TargetNode: targetNode}, nil
}

// Relocator returns an etcdrelocate.Relocator working on the management
// cluster, where tenant etcds run. cfg.Kube and cfg.Dynamic default to the
// handle's clients, cfg.Logger to the handle's logger.
func (cl *Cluster) Relocator(cfg etcdrelocate.Config) (*etcdrelocate.Relocator, error) {
	if cfg.Kube == nil {
		cfg.Kube = cl.c.core
	}
	if cfg.Dynamic == nil {
		cfg.Dynamic = cl.c.dyn
	}
	if cfg.Logger == nil {
		cfg.Logger = cl.c.log
	}
	return etcdrelocate.New(cfg)
}
