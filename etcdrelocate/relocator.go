package etcdrelocate

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Config configures a Relocator. Kube is required; everything else has a
// safe default. NewForConfig fills the Kubernetes clients from a
// rest.Config. etcd is reached per tenant namespace, through the members'
// client URLs with TLS and Dial: the relocator builds its etcd clients
// itself (one of all other members for membership, one per member for
// leadership transfer and the snapshot); the calls its decisions rest on
// are those of MembershipClient.
type Config struct {
	// Kube reads and changes pods, claims, volumes, nodes and ConfigMaps of
	// the tenant namespace.
	Kube kubernetes.Interface
	// Dynamic reads the operators' custom resources (EtcdCluster,
	// EtcdMember). Without it only the StatefulSet layout is recognised.
	Dynamic dynamic.Interface
	// TLS is the client TLS configuration for etcd. Default: built from the
	// namespace's Secrets etcd-client-tls (client certificate, CN root) and
	// etcd-ca-tls (the CA of the serving certificates).
	TLS *tls.Config
	// Dial connects to a member's client address. Default: a direct TCP
	// connection, which works in the cluster network (pod DNS). From
	// outside use PortForwardDialer.
	Dial DialFunc
	// Endpoints overrides the etcd client endpoints used to reach the
	// cluster. Default: the members' client URLs
	// (https://<pod>.<headless>.<ns>.svc:2379).
	Endpoints []string
	// Logger receives progress and diagnostics. Default: discard.
	Logger *slog.Logger
	// Progress is called at every step boundary of Execute. It must not
	// block for long.
	Progress func(Event)
	// Timeouts bound the executor's waits.
	Timeouts Timeouts
	// Identity names this executor in the relocation Lease it holds while
	// it runs (Execute, RestoreReplica); each run adds the process ID and
	// a random suffix, so two runs never share a holder identity. Default:
	// the host name.
	Identity string
	// LeaseDuration is how long the Lease stays valid without renewal
	// (renewed every third of it; whole seconds, at least 3 s). A run that
	// died is taken over once its Lease has not been renewed for this long.
	// Keep Timeouts.Call at most a third of it. Default 30 s.
	LeaseDuration time.Duration
}

// Relocator observes tenant etcd clusters, plans relocations and executes
// them. It holds no relocation state of its own: everything a run needs to
// resume is in the cluster, so any Relocator can continue a relocation
// another one started.
type Relocator struct {
	cfg Config
	log *slog.Logger
	t   Timeouts
}

// New returns a Relocator for cfg.
func New(cfg Config) (*Relocator, error) {
	if cfg.Kube == nil {
		return nil, fmt.Errorf("%w: Config.Kube is required", ErrInvalidConfig)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Relocator{cfg: cfg, log: log, t: cfg.Timeouts.withDefaults()}, nil
}

// NewForConfig returns a Relocator whose Kubernetes clients are built from
// rc where cfg leaves them nil (Config.Kube and Config.Dynamic). It does not
// choose how etcd is reached: from outside the cluster network set
// cfg.Dial, for example to PortForwardDialer(rc).
func NewForConfig(rc *rest.Config, cfg Config) (*Relocator, error) {
	if rc == nil {
		return nil, fmt.Errorf("%w: nil rest.Config", ErrInvalidConfig)
	}
	if cfg.Kube == nil {
		kube, err := kubernetes.NewForConfig(rc)
		if err != nil {
			return nil, fmt.Errorf("%w: kubernetes client: %w", ErrInvalidConfig, err)
		}
		cfg.Kube = kube
	}
	if cfg.Dynamic == nil {
		dyn, err := dynamic.NewForConfig(rc)
		if err != nil {
			return nil, fmt.Errorf("%w: dynamic client: %w", ErrInvalidConfig, err)
		}
		cfg.Dynamic = dyn
	}
	return New(cfg)
}

// usable returns an error wrapping ErrInvalidArgument for a nil Relocator
// or one not made by New (its zero value has no clients).
func (r *Relocator) usable() error {
	if r == nil || r.cfg.Kube == nil {
		return fmt.Errorf("%w: nil or zero Relocator (make one with New or NewForConfig)", ErrInvalidArgument)
	}
	return nil
}

// Plan observes the cluster req names and returns the plan for req, or the
// plan that resumes a relocation recorded in the cluster. See PlanFor.
func (r *Relocator) Plan(ctx context.Context, req Request) (*Plan, error) {
	s, err := r.Observe(ctx, req.Namespace, req.cluster())
	if err != nil {
		return nil, err
	}
	return PlanFor(s, req)
}

// connector returns the etcd connector for a namespace.
func (r *Relocator) connector(ctx context.Context, namespace string) (*connector, error) {
	tc := r.cfg.TLS
	if tc == nil {
		var err error
		if tc, err = tlsFromSecrets(ctx, r.cfg.Kube, namespace); err != nil {
			return nil, err
		}
	}
	return &connector{tls: tc, dial: r.cfg.Dial, call: r.t.Call}, nil
}

// EventPhase says where a step is.
type EventPhase string

// Event phases.
const (
	EventStarted EventPhase = "started"
	EventDone    EventPhase = "done"
	EventSkipped EventPhase = "skipped"
	EventFailed  EventPhase = "failed"
)

// Event reports a step boundary, or a stalled member (EventStalled,
// EventRecovered), to Config.Progress.
type Event struct {
	// Step is the step; Index its position (0-based) among Total steps.
	Step         StepKind
	Index, Total int
	Phase        EventPhase
	// Elapsed is the step's duration (Done, Skipped, Failed).
	Elapsed time.Duration
	// Message says what happened, for a progress line.
	Message string
	// Err is the step's error (Failed).
	Err error
	// Stall describes the member of an EventStalled or EventRecovered.
	Stall *Stall
}
