package etcdlayout

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// OperatorConfig configures the stand-in operator.
type OperatorConfig struct {
	// Namespace is the tenant namespace whose EtcdCluster "etcd" it
	// reconciles. Required.
	Namespace string
	// Dial reaches members by their cluster DNS names (for example
	// Tenant.DialContext or localenv.Cluster.DialContext). Required.
	Dial func(ctx context.Context, addr string) (net.Conn, error)
	// Resync is how often it reconciles without an event. Default 1s (the
	// real operator requeues about every 30s; tests want it quicker).
	Resync time.Duration
	// Logger receives what it does. Default: discard.
	Logger *slog.Logger
	// ProgressDeadline is how long a latched target may take before the
	// operator reports DeadlineExceeded, where the EtcdCluster does not set
	// spec.progressDeadlineSeconds. Default 600s, the real operator's.
	ProgressDeadline time.Duration
	// User, if set, is the identity the operator acts as (impersonated
	// with rc's credentials, in group system:masters), for example
	// OperatorUser where the member deletion guard is installed.
	User string
}

// Operator is a test-only stand-in for the cozystack etcd-operator
// (v1alpha2, Cozystack ≥ v1.6). It is NOT that operator: it does what that
// operator's code (controllers/etcdcluster_controller.go,
// controllers/etcdmember_controller.go) and documentation
// (docs/concepts.md, docs/operations.md) do in the flows tenantkit's tests
// exercise, as plainly as possible:
//
//   - the locking pattern: the spec is latched into status.observed
//     (Progressing=True/InitialSnapshot, SpecChanged, RetryAfterDeadline)
//     with status.progressDeadline (spec.progressDeadlineSeconds, default
//     OperatorConfig.ProgressDeadline), and the operator reconciles toward
//     that copy; a changed spec is adopted only once the copy is reached;
//     once the deadline passes on an incomplete cluster it reports
//     Available=False/DeadlineExceeded and stops before it scales or
//     promotes, until the spec is edited;
//   - bootstrap from one seed EtcdMember (GenerateName etcd-,
//     spec.bootstrap=true, --initial-cluster-state=new), then latch
//     status.clusterID from the seed;
//   - scale up one member at a time once every member is Ready: create the
//     EtcdMember with version, storage, options, affinity, topology spread
//     and additional metadata from status.observed, MemberAddAsLearner,
//     patch spec.initialCluster, start it, MemberPromote once etcd accepts;
//     scale down by deleting the newest member;
//   - no membership change while any EtcdMember is being deleted;
//   - for each member: PVC data-<member> and Pod <member> (hostname
//     <member>, subdomain etcd, affinity and spread from the member's spec,
//     readiness /health, TCP liveness on the peer port), both controlled
//     by the EtcdMember, the Pod labelled role=voter once it is a voter;
//     the headless Service etcd; a PDB over voters with minAvailable the
//     quorum of max(voters, observed replicas);
//   - status: readyMembers and the real conditions (Available
//     QuorumHealthy/QuorumAvailable/QuorumLost/DeadlineExceeded, Degraded
//     QuorumHealthy/MembersUnhealthy/QuorumLost, Progressing Reconciled
//     once the observed target is reached, which clears the deadline);
//   - on EtcdMember deletion, the finalizer
//     etcd-operator.cozystack.io/member-cleanup runs MemberRemove through
//     the other members before the member goes; garbage collection then
//     takes its Pod and PVC, and the next reconcile adds a replacement with
//     a new name ("Broken member" in docs/operations.md).
//
// Pause (replicas 0), memory-backed members and their self-heal, auth,
// defrag, backups and cert-manager integration are not modelled; the
// admission policy guarding member deletion is installed separately
// (InstallMemberDeletionGuard).
type Operator struct {
	cfg   OperatorConfig
	c     *clients
	rest  *rest.Config
	log   *slog.Logger
	kick  chan struct{}
	stop  chan struct{}
	wg    sync.WaitGroup
	once  sync.Once
	infs  []interface{ Shutdown() }
	tlsMu sync.Mutex
	tls   *tls.Config
}

// StartOperator starts the stand-in operator for the namespace's
// EtcdCluster. Stop stops it.
func StartOperator(ctx context.Context, rc *rest.Config, cfg OperatorConfig) (*Operator, error) {
	if cfg.Namespace == "" || cfg.Dial == nil {
		return nil, fmt.Errorf("%w: Namespace and Dial are required", ErrInvalidConfig)
	}
	if cfg.Resync == 0 {
		cfg.Resync = time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.ProgressDeadline == 0 {
		cfg.ProgressDeadline = 600 * time.Second
	}
	if cfg.User != "" {
		rc = rest.CopyConfig(rc)
		rc.Impersonate = rest.ImpersonationConfig{UserName: cfg.User, Groups: []string{"system:masters", "system:authenticated"}}
	}
	c, err := newClients(rc)
	if err != nil {
		return nil, err
	}
	o := &Operator{cfg: cfg, c: c, rest: rc, log: cfg.Logger, kick: make(chan struct{}, 1), stop: make(chan struct{})}
	if err := o.watch(ctx); err != nil {
		o.Stop()
		return nil, err
	}
	o.wg.Add(1)
	go o.run()
	return o, nil
}

// watch wakes the reconcile loop on every change of the cluster, its
// members and the namespace's pods.
func (o *Operator) watch(ctx context.Context) error {
	h := cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { o.wake() }, UpdateFunc: func(any, any) { o.wake() }, DeleteFunc: func(any) { o.wake() },
	}
	dyn := dynamicinformer.NewFilteredDynamicSharedInformerFactory(o.c.dyn, 0, o.cfg.Namespace, nil)
	kube := informers.NewSharedInformerFactoryWithOptions(o.c.kube, 0, informers.WithNamespace(o.cfg.Namespace))
	synced := []cache.InformerSynced{}
	for _, inf := range []cache.SharedIndexInformer{
		dyn.ForResource(etcdClusters).Informer(), dyn.ForResource(EtcdMembers).Informer(), kube.Core().V1().Pods().Informer(),
	} {
		if _, err := inf.AddEventHandler(h); err != nil {
			return err
		}
		synced = append(synced, inf.HasSynced)
	}
	dyn.Start(o.stop)
	kube.Start(o.stop)
	o.infs = append(o.infs, dyn, kube)
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return fmt.Errorf("operator: sync informers: %w", ctx.Err())
	}
	return nil
}

func (o *Operator) wake() {
	select {
	case o.kick <- struct{}{}:
	default:
	}
}

func (o *Operator) run() {
	defer o.wg.Done()
	t := time.NewTicker(o.cfg.Resync)
	defer t.Stop()
	for {
		select {
		case <-o.stop:
			return
		case <-o.kick:
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := o.reconcile(ctx); err != nil {
			o.log.Debug("reconcile", "namespace", o.cfg.Namespace, "err", err)
		}
		cancel()
	}
}

// Stop stops the operator. It is safe to call more than once.
func (o *Operator) Stop() {
	o.once.Do(func() {
		close(o.stop)
		o.wg.Wait()
		for _, inf := range o.infs {
			inf.Shutdown()
		}
	})
}

// etcdClient returns a client for the given member endpoints, TLS from the
// operator client Secret.
func (o *Operator) etcdClient(ctx context.Context, members []string) (*clientv3.Client, error) {
	o.tlsMu.Lock()
	cfg := o.tls
	o.tlsMu.Unlock()
	if cfg == nil {
		var err error
		if cfg, err = clientTLS(ctx, o.c.kube, o.cfg.Namespace); err != nil {
			return nil, err
		}
		o.tlsMu.Lock()
		o.tls = cfg
		o.tlsMu.Unlock()
	}
	var eps []string
	for _, m := range members {
		eps = append(eps, memberClientURL(o.cfg.Namespace, m))
	}
	return clientv3.New(clientv3.Config{
		Endpoints: eps, TLS: cfg.Clone(), DialTimeout: 3 * time.Second, Logger: zap.NewNop(), Context: ctx,
		DialOptions: []grpc.DialOption{grpc.WithContextDialer(o.cfg.Dial)},
	})
}

// member is the parts of an EtcdMember the operator uses.
type member struct {
	obj            *unstructured.Unstructured
	name           string
	bootstrap      bool
	initialCluster string
	memberID       string
	isVoter        bool
	deleting       bool
	// ready is the member's Pod readiness (the real operator's member
	// Ready condition), set by reconcile.
	ready bool
}

func toMember(u *unstructured.Unstructured) member {
	m := member{obj: u, name: u.GetName(), deleting: u.GetDeletionTimestamp() != nil}
	m.bootstrap, _, _ = unstructured.NestedBool(u.Object, "spec", "bootstrap")
	m.initialCluster, _, _ = unstructured.NestedString(u.Object, "spec", "initialCluster")
	m.memberID, _, _ = unstructured.NestedString(u.Object, "status", "memberID")
	m.isVoter, _, _ = unstructured.NestedBool(u.Object, "status", "isVoter")
	return m
}

func (o *Operator) members(ctx context.Context) ([]member, error) {
	list, err := o.c.dyn.Resource(EtcdMembers).Namespace(o.cfg.Namespace).List(ctx,
		metav1.ListOptions{LabelSelector: labelCluster + "=" + clusterName})
	if err != nil {
		return nil, err
	}
	out := make([]member, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, toMember(&list.Items[i]))
	}
	return out, nil
}
