package localenv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	v1crds "github.com/vmware-tanzu/velero/config/crd/v1/crds"
	v2alpha1crds "github.com/vmware-tanzu/velero/config/crd/v2alpha1/crds"
	velerov1 "github.com/vmware-tanzu/velero/pkg/apis/velero/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/cozystack/tenantkit/internal/crds"
	"github.com/cozystack/tenantkit/internal/process"
	"github.com/cozystack/tenantkit/internal/serverbin"
)

// VeleroConfig configures a Velero server started by StartVelero.
type VeleroConfig struct {
	// Name names the component and its directory. Default "velero"; give
	// each server of an environment its own.
	Name string
	// APIServer is the cluster Velero serves. Default: the environment's
	// first apiserver, or on the kind provider the kind cluster (through
	// its admin kubeconfig, Env.KubeconfigPath).
	APIServer *APIServer
	// Namespace is Velero's namespace, created if missing. Default
	// "cozy-velero", as in Cozystack's Velero addon.
	Namespace string
	// SyncPeriod is --backup-sync-period: how often Velero syncs Backup
	// objects from its locations. Default 5s (Velero's own default is 1m).
	SyncPeriod time.Duration
	// ValidationFrequency is --store-validation-frequency. Default 5s.
	ValidationFrequency time.Duration
	// ExtraArgs are appended to the server's flags.
	ExtraArgs []string
}

// VeleroServer is a `velero server` process running out of cluster
// against an apiserver or the kind cluster of the environment, with the
// AWS object-store plugin. It has no node agent, so it backs up and
// restores API objects only (no volume data).
type VeleroServer struct {
	// Name is the component name.
	Name string
	// Namespace is Velero's namespace.
	Namespace string
	// Dir holds the plugin folder, credentials and log.
	Dir string

	proc *process.Process
}

// Stop stops the server.
func (v *VeleroServer) Stop() error { return v.proc.Stop() }

// LogPath returns the server's log file.
func (v *VeleroServer) LogPath() string { return v.proc.LogPath() }

// StartVelero applies Velero's CRDs (from Velero's Go package) to the
// apiserver, creates the namespace and starts `velero server` with the AWS
// plugin, then waits until it answers a ServerStatusRequest. It creates no
// backup storage location: create one (for example with
// backup.Client.ApplyLocation) pointing at an S3 server of the
// environment.
func (e *Env) StartVelero(ctx context.Context, cfg VeleroConfig) (*VeleroServer, error) {
	if e.isStopped() {
		return nil, ErrStopped
	}
	cfg = cfg.withDefaults()
	a, err := e.veleroTarget(cfg.APIServer)
	if err != nil {
		return nil, err
	}
	if err := e.bins.prepare(ctx, serverbin.Velero, serverbin.VeleroPluginAWS); err != nil {
		return nil, err
	}
	bin, err := e.bins.path(ctx, serverbin.Velero)
	if err != nil {
		return nil, err
	}
	plugin, err := e.bins.path(ctx, serverbin.VeleroPluginAWS)
	if err != nil {
		return nil, err
	}
	rc := a.rc
	if err := installVeleroCRDs(ctx, rc); err != nil {
		return nil, err
	}
	if err := ensureNamespace(ctx, rc, cfg.Namespace); err != nil {
		return nil, err
	}
	if err := ensureVeleroDeployment(ctx, rc, cfg.Namespace); err != nil {
		return nil, err
	}
	dir := filepath.Join(e.dir, cfg.Name)
	pluginDir, tmpDir := filepath.Join(dir, "plugins"), filepath.Join(dir, "tmp")
	for _, d := range []string{pluginDir, tmpDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("start %s: %w", cfg.Name, err)
		}
	}
	// Velero runs every executable in the plugin folder: give it only the
	// AWS plugin.
	if err := os.Symlink(plugin, filepath.Join(pluginDir, "velero-plugin-for-aws")); err != nil {
		return nil, fmt.Errorf("start %s: %w", cfg.Name, err)
	}
	metricsPort, err := FreePort()
	if err != nil {
		return nil, err
	}
	args := []string{"server",
		"--kubeconfig", a.kubeconfig,
		"--namespace", cfg.Namespace,
		"--plugin-dir", pluginDir,
		"--metrics-address", fmt.Sprintf("127.0.0.1:%d", metricsPort),
		"--profiler-address", "",
		"--backup-sync-period", cfg.SyncPeriod.String(),
		"--store-validation-frequency", cfg.ValidationFrequency.String(),
		"--default-volumes-to-fs-backup=false",
		"--log-level", "info",
	}
	v := &VeleroServer{Name: cfg.Name, Namespace: cfg.Namespace, Dir: dir}
	v.proc, err = process.Start(process.Config{
		Name: cfg.Name, Path: bin, Args: append(args, cfg.ExtraArgs...),
		// Velero writes the locations' credential files under TMPDIR.
		Env:       []string{"TMPDIR=" + tmpDir, "VELERO_NAMESPACE=" + cfg.Namespace},
		Dir:       dir,
		LogPath:   filepath.Join(dir, cfg.Name+".log"),
		StopGrace: 5 * time.Second,
	})
	if err != nil {
		return nil, err
	}
	if err := waitVeleroReady(ctx, v.proc, 2*e.cfg.StartTimeout, rc, cfg.Namespace); err != nil {
		_ = v.proc.Kill()
		return nil, err
	}
	e.Track(Component{Name: cfg.Name, Version: e.bins.version(serverbin.Velero), Endpoint: a.url + " ns/" + cfg.Namespace,
		LogPath: v.proc.LogPath(), Process: v.proc})
	e.log.Info("velero ready", "name", cfg.Name, "apiserver", a.name, "namespace", cfg.Namespace)
	return v, nil
}

// veleroCluster is the cluster a Velero server serves: an apiserver of
// the environment or its kind cluster.
type veleroCluster struct {
	name, url, kubeconfig string
	rc                    *rest.Config
}

// veleroTarget picks the cluster StartVelero serves: a, else the first
// apiserver, else the kind cluster.
func (e *Env) veleroTarget(a *APIServer) (veleroCluster, error) {
	if a == nil && e.provider == Kind {
		if e.rest == nil {
			return veleroCluster{}, fmt.Errorf("%w: no kind cluster for velero", ErrUnsupported)
		}
		return veleroCluster{name: e.kindName, url: e.rest.Host, kubeconfig: e.kubecfg, rc: e.RESTConfig()}, nil
	}
	if a == nil {
		if as := e.APIServers(); len(as) > 0 {
			a = as[0]
		}
	}
	if a == nil {
		return veleroCluster{}, fmt.Errorf("%w: no apiserver for velero", ErrUnsupported)
	}
	return veleroCluster{name: a.Name, url: a.URL, kubeconfig: a.KubeconfigPath(), rc: a.RESTConfig()}, nil
}

func (cfg VeleroConfig) withDefaults() VeleroConfig {
	if cfg.Name == "" {
		cfg.Name = "velero"
	}
	if cfg.Namespace == "" {
		cfg.Namespace = "cozy-velero"
	}
	if cfg.SyncPeriod == 0 {
		cfg.SyncPeriod = 5 * time.Second
	}
	if cfg.ValidationFrequency == 0 {
		cfg.ValidationFrequency = 5 * time.Second
	}
	return cfg
}

// installVeleroCRDs creates (or updates) Velero's CRDs and waits until
// they are served.
func installVeleroCRDs(ctx context.Context, rc *rest.Config) error {
	all := append(append([]*apiextv1.CustomResourceDefinition{}, v1crds.CRDs...), v2alpha1crds.CRDs...)
	return crds.Install(ctx, rc, all...)
}

func ensureNamespace(ctx context.Context, rc *rest.Config, name string) error {
	kube, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return err
	}
	_, err = kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", name, err)
	}
	return nil
}

// ensureVeleroDeployment creates the Deployment "velero" that an in-cluster
// install has, scaled to zero: Velero's restore actions read the server's
// image from it (pkg/restore/actions/pod_volume_restore_action.go) and
// every restore fails without it.
func ensureVeleroDeployment(ctx context.Context, rc *rest.Config, ns string) error {
	kube, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return err
	}
	zero := int32(0)
	labels := map[string]string{"component": "velero", "deploy": "velero"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "velero", Namespace: ns, Labels: labels,
			Annotations: map[string]string{"tenantkit.cozystack.io/note": "placeholder: the server runs out of cluster"}},
		Spec: appsv1.DeploymentSpec{
			Replicas: &zero,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "velero", Image: "velero/velero:" + serverbin.Velero.Version, Command: []string{"/velero"}, Args: []string{"server"},
				}}},
			},
		},
	}
	_, err = kube.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create velero deployment: %w", err)
	}
	return nil
}

// waitVeleroReady creates a ServerStatusRequest and waits until the server
// has processed it: its controllers are running.
func waitVeleroReady(ctx context.Context, p *process.Process, timeout time.Duration, rc *rest.Config, ns string) error {
	scheme := runtime.NewScheme()
	if err := velerov1.AddToScheme(scheme); err != nil {
		return err
	}
	vc := rest.CopyConfig(rc)
	vc.GroupVersion, vc.APIPath = &velerov1.SchemeGroupVersion, "/apis"
	vc.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	client, err := rest.RESTClientFor(vc)
	if err != nil {
		return err
	}
	ssr := &velerov1.ServerStatusRequest{
		TypeMeta:   metav1.TypeMeta{APIVersion: velerov1.SchemeGroupVersion.String(), Kind: "ServerStatusRequest"},
		ObjectMeta: metav1.ObjectMeta{GenerateName: "tenantkit-ready-", Namespace: ns},
	}
	var created velerov1.ServerStatusRequest
	if err := client.Post().Namespace(ns).Resource("serverstatusrequests").Body(ssr).Do(ctx).Into(&created); err != nil {
		return fmt.Errorf("velero: create server status request: %w", err)
	}
	return process.WaitReady(ctx, p, timeout, func(ctx context.Context) error {
		var cur velerov1.ServerStatusRequest
		if err := client.Get().Namespace(ns).Resource("serverstatusrequests").Name(created.Name).Do(ctx).Into(&cur); err != nil {
			return err
		}
		if cur.Status.Phase != velerov1.ServerStatusRequestPhaseProcessed {
			return fmt.Errorf("server status request %s not processed yet", created.Name)
		}
		return nil
	})
}
