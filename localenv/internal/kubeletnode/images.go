package kubeletnode

import (
	"context"
	"os/exec"
	"path"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

// etcdImage reports whether an image reference names an etcd server image,
// by the rule the node agent uses: its repository is named etcd
// (quay.io/coreos/etcd:v3.5.12, registry.k8s.io/etcd:3.5.15-0, ...).
// Digest references are left out: containerd cannot tag an image under one.
func etcdImage(ref string) bool {
	if strings.ContainsRune(ref, '@') {
		return false
	}
	repo := ref
	if i := strings.LastIndexByte(repo, ':'); i > strings.LastIndexByte(repo, '/') {
		repo = repo[:i]
	}
	return path.Base(repo) == "etcd"
}

// imageTagger gives every node, under each etcd image name a pod names,
// tenantkit's etcd image: nothing is ever pulled (the host network policy
// sets imagePullPolicy Never), so the image must be there before the
// kubelet starts the container. It tags on the pod's creation, before the
// scheduler has even placed it.
type imageTagger struct {
	pool *Pool

	mu     sync.Mutex
	tagged map[string]bool
}

// watchImages starts the tagger; it stops with ctx.
func (p *Pool) watchImages(ctx context.Context) error {
	t := &imageTagger{pool: p, tagged: map[string]bool{}}
	for _, img := range p.cfg.EtcdImages {
		t.tagged[img] = true // imported with the image
	}
	factory := informers.NewSharedInformerFactory(p.cfg.Client, 0)
	pods := factory.Core().V1().Pods().Informer()
	if _, err := pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { t.pod(ctx, obj) },
		UpdateFunc: func(_, obj any) { t.pod(ctx, obj) },
	}); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	return nil
}

func (t *imageTagger) pod(ctx context.Context, obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	for _, c := range append(append([]corev1.Container(nil), pod.Spec.InitContainers...), pod.Spec.Containers...) {
		if etcdImage(c.Image) {
			t.tag(ctx, c.Image)
		}
	}
}

// tag tags the image on every node that runs; a node that is down gets
// it at the next pod event after it is up again.
func (t *imageTagger) tag(ctx context.Context, image string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.tagged[image] {
		return
	}
	all := true
	for _, name := range t.pool.order {
		n := t.pool.nodes[name]
		out, err := exec.CommandContext(ctx, t.pool.cfg.Binaries.Ctr, "-a", n.paths.socket(), "-n", "k8s.io",
			"images", "tag", "--force", etcdBaseImage, image).CombinedOutput()
		if err != nil {
			all = false
			t.pool.log.Warn("tag etcd image", "node", name, "image", image, "err", err, "output", strings.TrimSpace(string(out)))
		}
	}
	t.tagged[image] = all
}
