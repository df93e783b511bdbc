package localvolume

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// Labels and annotations on the volumes this package creates.
const (
	// LabelNode names the node a volume lives on.
	LabelNode = "localenv.tenantkit.io/node"
	// provisionedBy marks volumes as provisioned by an external provisioner,
	// so the persistent volume controller leaves their deletion to the
	// cleaner instead of failing them for want of an in-tree deleter (the
	// same trick the sig-storage local static provisioner uses).
	provisionedBy = "localenv.tenantkit.io/local-volume"
)

// Config configures a Manager.
type Config struct {
	// Client creates the StorageClass and volumes. Required.
	Client kubernetes.Interface
	// Nodes lists the nodes that get volumes. Required.
	Nodes []string
	// Dir returns the directory that holds a node's volumes (one
	// subdirectory per volume). Required.
	Dir func(node string) string
	// StorageClass names the StorageClass. Default "local", as in Cozystack.
	StorageClass string
	// NotDefault leaves the StorageClass without the default-class
	// annotation. By default it is the cluster's default class, so claims
	// without a class bind to it.
	NotDefault bool
	// PerNode is the number of volumes per node. Default 4.
	PerNode int
	// Capacity is every volume's nominal size. Default 10Gi. Nothing
	// enforces it.
	Capacity resource.Quantity
	// InUse reports whether a process still uses a directory; the cleaner
	// waits before wiping a volume that is in use. Optional.
	InUse func(dir string) bool
	// Logger receives recycling events. Default: discard.
	Logger *slog.Logger
}

// Manager owns the StorageClass and the local PersistentVolumes and recycles
// released volumes. Its methods are safe for concurrent use.
type Manager struct {
	cfg     Config
	factory informers.SharedInformerFactory
	stop    chan struct{}
	once    sync.Once

	mu        sync.Mutex
	specs     map[string]*corev1.PersistentVolume // every volume, by name
	recycling map[string]bool                     // deleted by us, recreate when gone
	recycled  int
	wg        sync.WaitGroup
}

// Start creates the StorageClass and PerNode volumes on every node and
// starts the cleaner. Stop stops the cleaner; the objects stay (they go with
// the apiserver).
func Start(ctx context.Context, cfg Config) (*Manager, error) {
	if cfg.Client == nil || len(cfg.Nodes) == 0 || cfg.Dir == nil {
		return nil, fmt.Errorf("%w: Client, Nodes and Dir are required", ErrInvalidConfig)
	}
	if cfg.StorageClass == "" {
		cfg.StorageClass = "local"
	}
	if cfg.PerNode == 0 {
		cfg.PerNode = 4
	}
	if cfg.PerNode < 0 {
		return nil, fmt.Errorf("%w: PerNode is %d", ErrInvalidConfig, cfg.PerNode)
	}
	if cfg.Capacity.IsZero() {
		cfg.Capacity = resource.MustParse("10Gi")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	m := &Manager{cfg: cfg, stop: make(chan struct{}), specs: map[string]*corev1.PersistentVolume{}, recycling: map[string]bool{}}
	if err := m.createStorageClass(ctx); err != nil {
		return nil, err
	}
	for _, node := range cfg.Nodes {
		for i := range cfg.PerNode {
			pv, err := m.newVolume(node, i)
			if err != nil {
				return nil, err
			}
			if _, err := cfg.Client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
				return nil, fmt.Errorf("create volume %s: %w", pv.Name, err)
			}
		}
	}
	if err := m.watch(ctx); err != nil {
		m.Stop()
		return nil, err
	}
	return m, nil
}

// StorageClass returns the name of the StorageClass.
func (m *Manager) StorageClass() string { return m.cfg.StorageClass }

// Recycled returns how many released volumes the cleaner has wiped and put
// back so far.
func (m *Manager) Recycled() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.recycled
}

// Stop stops the cleaner. It is safe to call more than once.
func (m *Manager) Stop() {
	m.once.Do(func() {
		close(m.stop)
		if m.factory != nil {
			m.factory.Shutdown()
		}
		m.wg.Wait()
	})
}

func (m *Manager) createStorageClass(ctx context.Context) error {
	bind := storagev1.VolumeBindingWaitForFirstConsumer
	reclaim := corev1.PersistentVolumeReclaimDelete
	sc := &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: m.cfg.StorageClass},
		Provisioner:       "kubernetes.io/no-provisioner",
		VolumeBindingMode: &bind,
		ReclaimPolicy:     &reclaim,
	}
	if !m.cfg.NotDefault {
		sc.Annotations = map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}
	}
	_, err := m.cfg.Client.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create storage class %s: %w", sc.Name, err)
	}
	return nil
}

// newVolume creates the directory of volume i on node and returns its
// PersistentVolume: a local volume with node affinity to that node and
// reclaim policy Delete.
func (m *Manager) newVolume(node string, i int) (*corev1.PersistentVolume, error) {
	name := fmt.Sprintf("%s-vol-%d", node, i)
	dir := filepath.Join(m.cfg.Dir(node), name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create volume %s: %w", name, err)
	}
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Labels:      map[string]string{LabelNode: node},
			Annotations: map[string]string{"pv.kubernetes.io/provisioned-by": provisionedBy},
		},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: m.cfg.Capacity},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete,
			StorageClassName:              m.cfg.StorageClass,
			PersistentVolumeSource:        corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: dir}},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{
					Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{node},
				}}}},
			}},
		},
	}
	m.mu.Lock()
	m.specs[name] = pv.DeepCopy()
	m.mu.Unlock()
	return pv, nil
}

func (m *Manager) watch(ctx context.Context) error {
	m.factory = informers.NewSharedInformerFactoryWithOptions(m.cfg.Client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = LabelNode }))
	inf := m.factory.Core().V1().PersistentVolumes().Informer()
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { m.observe(obj) },
		UpdateFunc: func(_, obj any) { m.observe(obj) },
		DeleteFunc: func(obj any) { m.deleted(obj) },
	})
	if err != nil {
		return err
	}
	m.factory.Start(m.stop)
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return fmt.Errorf("local volumes: sync: %w", ctx.Err())
	}
	return nil
}

// observe starts recycling a volume that became Released (its claim was
// deleted) or Failed, unless its reclaim policy is Retain: as with a real
// provisioner, a retained volume keeps its data until its policy is set
// back to Delete (which recycles it then) or it is deleted.
func (m *Manager) observe(obj any) {
	pv, ok := obj.(*corev1.PersistentVolume)
	if !ok || pv.DeletionTimestamp != nil || pv.Spec.PersistentVolumeReclaimPolicy == corev1.PersistentVolumeReclaimRetain {
		return
	}
	if pv.Status.Phase != corev1.VolumeReleased && pv.Status.Phase != corev1.VolumeFailed {
		return
	}
	m.mu.Lock()
	if m.recycling[pv.Name] || m.specs[pv.Name] == nil {
		m.mu.Unlock()
		return
	}
	m.recycling[pv.Name] = true
	m.mu.Unlock()
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		m.recycle(pv)
	}()
}

// recycle wipes a released volume's directory and deletes the volume; deleted
// then creates it again, empty, with a new UID.
func (m *Manager) recycle(pv *corev1.PersistentVolume) {
	dir := pv.Spec.Local.Path
	for m.cfg.InUse != nil && m.cfg.InUse(dir) {
		select {
		case <-m.stop:
			return
		case <-time.After(200 * time.Millisecond):
		}
	}
	if err := wipe(dir); err != nil {
		m.cfg.Logger.Error("wipe local volume", "volume", pv.Name, "err", err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	uid := pv.UID
	err := m.cfg.Client.CoreV1().PersistentVolumes().Delete(ctx, pv.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) {
		m.cfg.Logger.Error("delete released volume", "volume", pv.Name, "err", err)
		m.mu.Lock()
		delete(m.recycling, pv.Name)
		m.mu.Unlock()
		return
	}
	m.cfg.Logger.Info("wiped released volume", "volume", pv.Name, "claim", claimName(pv))
}

func (m *Manager) deleted(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	pv, ok := obj.(*corev1.PersistentVolume)
	if !ok {
		return
	}
	m.mu.Lock()
	spec := m.specs[pv.Name]
	again := m.recycling[pv.Name] && spec != nil
	delete(m.recycling, pv.Name)
	if again {
		m.recycled++
	}
	m.mu.Unlock()
	if !again {
		return
	}
	select {
	case <-m.stop:
		return
	default:
	}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := m.cfg.Client.CoreV1().PersistentVolumes().Create(ctx, spec.DeepCopy(), metav1.CreateOptions{}); err != nil {
			m.cfg.Logger.Error("recreate local volume", "volume", spec.Name, "err", err)
		}
	}()
}

func claimName(pv *corev1.PersistentVolume) string {
	if pv.Spec.ClaimRef == nil {
		return ""
	}
	return pv.Spec.ClaimRef.Namespace + "/" + pv.Spec.ClaimRef.Name
}

// wipe removes everything inside dir, leaving dir itself.
func wipe(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}
