package backup

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	velerov1 "github.com/vmware-tanzu/velero/pkg/apis/velero/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// defaultNamespace is the namespace of Cozystack's Velero addon in a tenant
// cluster.
const defaultNamespace = "cozy-velero"

// Config configures a Client. Velero and Clientset are required (New) or
// built from a rest.Config (NewForConfig); the zero values of the other
// fields work with Cozystack's Velero addon.
type Config struct {
	// Velero is a REST client for velero.io/v1 (JSON, Velero's scheme).
	// NewForConfig builds one.
	Velero rest.Interface
	// Clientset reads the namespace's Secrets and Pods.
	Clientset kubernetes.Interface
	// Namespace is where Velero runs and keeps its objects. Default
	// "cozy-velero", Cozystack's Velero addon's; upstream Velero uses
	// "velero".
	Namespace string
	// PollInterval is how often the Wait methods read the object they wait
	// for. Default 1s.
	PollInterval time.Duration
	// Logger receives debug messages. Default: discard.
	Logger *slog.Logger
}

// Client drives Velero's lifecycle objects (velero.io/v1) in one cluster:
// backup storage locations, backups, restores, schedules and deletions. It
// only talks to the Kubernetes API; Velero's server does the work. Its
// methods are safe for concurrent use.
type Client struct {
	rest rest.Interface
	kube kubernetes.Interface
	ns   string
	cfg  Config
	log  *slog.Logger
}

// New returns a Client using cfg's clients. It does no I/O.
func New(cfg Config) (*Client, error) {
	if cfg.Velero == nil || cfg.Clientset == nil {
		return nil, fmt.Errorf("%w: Velero and Clientset are required (NewForConfig builds them)", ErrInvalidConfig)
	}
	if cfg.Namespace == "" {
		cfg.Namespace = defaultNamespace
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Client{rest: cfg.Velero, kube: cfg.Clientset, ns: cfg.Namespace, cfg: cfg, log: cfg.Logger}, nil
}

// NewForConfig returns a Client for the cluster rc points at; the clients
// cfg leaves nil are built from rc. It does no I/O.
func NewForConfig(rc *rest.Config, cfg Config) (*Client, error) {
	if rc == nil {
		return nil, fmt.Errorf("%w: nil rest.Config", ErrInvalidConfig)
	}
	if cfg.Velero == nil {
		scheme := runtime.NewScheme()
		if err := velerov1.AddToScheme(scheme); err != nil {
			return nil, fmt.Errorf("backup: velero scheme: %w", err)
		}
		vc := rest.CopyConfig(rc)
		vc.GroupVersion = &velerov1.SchemeGroupVersion
		vc.APIPath = "/apis"
		vc.ContentType = runtime.ContentTypeJSON
		vc.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
		if vc.UserAgent == "" {
			vc.UserAgent = "tenantkit-backup"
		}
		rc2, err := rest.RESTClientFor(vc)
		if err != nil {
			return nil, fmt.Errorf("backup: velero client: %w", err)
		}
		cfg.Velero = rc2
	}
	if cfg.Clientset == nil {
		kube, err := kubernetes.NewForConfig(rc)
		if err != nil {
			return nil, fmt.Errorf("backup: kubernetes client: %w", err)
		}
		cfg.Clientset = kube
	}
	return New(cfg)
}

// Namespace returns the Velero namespace.
func (c *Client) Namespace() string { return c.ns }

func (c *Client) get(ctx context.Context, resource, name string, into runtime.Object) error {
	return c.rest.Get().Namespace(c.ns).Resource(resource).Name(name).Do(ctx).Into(into)
}

func (c *Client) create(ctx context.Context, resource string, obj, into runtime.Object) error {
	return c.rest.Post().Namespace(c.ns).Resource(resource).Body(obj).Do(ctx).Into(into)
}

func (c *Client) update(ctx context.Context, resource, name string, obj, into runtime.Object) error {
	return c.rest.Put().Namespace(c.ns).Resource(resource).Name(name).Body(obj).Do(ctx).Into(into)
}

func (c *Client) list(ctx context.Context, resource, selector string, into runtime.Object) error {
	req := c.rest.Get().Namespace(c.ns).Resource(resource)
	if selector != "" {
		req = req.Param("labelSelector", selector)
	}
	return req.Do(ctx).Into(into)
}

// poll calls check every PollInterval until it reports done, returns an
// error, or ctx ends.
func (c *Client) poll(ctx context.Context, check func() (bool, error)) error {
	t := time.NewTicker(c.cfg.PollInterval)
	defer t.Stop()
	for {
		done, err := check()
		if err != nil || done {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}
