package nodeagent

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// volumes materialises the pod's volumes and returns each one's directory:
//
//   - persistentVolumeClaim: the bound local (or hostPath) volume's
//     directory, which must belong to this node;
//   - secret, configMap and projected (secret, configMap and downward API
//     sources): files written afresh into the pod folder at every container
//     start; service account tokens are not written;
//   - emptyDir and anything else: a directory in the pod folder that lives
//     as long as the pod;
//   - hostPath: a directory under the node folder, so pods never touch this
//     machine's real paths.
func (w *podWorker) volumes(ctx context.Context, pod *corev1.Pod) (map[string]string, error) {
	out := map[string]string{}
	for _, v := range pod.Spec.Volumes {
		dir := filepath.Join(w.dir, "volumes", v.Name)
		var err error
		switch {
		case v.PersistentVolumeClaim != nil:
			dir, err = w.claimDir(ctx, pod.Namespace, v.PersistentVolumeClaim.ClaimName)
		case v.Secret != nil:
			err = w.writeSecret(ctx, dir, pod.Namespace, v.Secret.SecretName, v.Secret.Items, v.Secret.Optional)
		case v.ConfigMap != nil:
			err = w.writeConfigMap(ctx, dir, pod.Namespace, v.ConfigMap.Name, v.ConfigMap.Items, v.ConfigMap.Optional)
		case v.Projected != nil:
			err = w.writeProjected(ctx, dir, pod, v.Projected)
		case v.HostPath != nil:
			dir = filepath.Join(w.node.dir, "hostpath", filepath.Clean("/"+v.HostPath.Path))
			err = os.MkdirAll(dir, 0o700)
		default:
			err = os.MkdirAll(dir, 0o700)
		}
		if err != nil {
			return nil, fmt.Errorf("volume %s: %w", v.Name, err)
		}
		out[v.Name] = dir
	}
	return out, nil
}

// claimDir returns the directory of the volume bound to a claim.
func (w *podWorker) claimDir(ctx context.Context, ns, claim string) (string, error) {
	cs := w.agent.cfg.Client.CoreV1()
	pvc, err := cs.PersistentVolumeClaims(ns).Get(ctx, claim, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("claim %s: %w", claim, err)
	}
	if pvc.DeletionTimestamp != nil {
		return "", fmt.Errorf("claim %s is being deleted", claim)
	}
	if pvc.Spec.VolumeName == "" || pvc.Status.Phase != corev1.ClaimBound {
		return "", fmt.Errorf("claim %s is not bound yet", claim)
	}
	pv, err := cs.PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("volume %s: %w", pvc.Spec.VolumeName, err)
	}
	switch {
	case pv.Spec.Local != nil:
		return pv.Spec.Local.Path, nil
	case pv.Spec.HostPath != nil:
		return pv.Spec.HostPath.Path, nil
	}
	return "", fmt.Errorf("volume %s: only local and hostPath volumes can be mounted on a simulated node", pv.Name)
}

func (w *podWorker) writeSecret(ctx context.Context, dir, ns, name string, items []corev1.KeyToPath, opt *bool) error {
	s, err := w.agent.cfg.Client.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		if apierrors.IsNotFound(err) && opt != nil && *opt {
			return writeFiles(dir, nil, nil)
		}
		return fmt.Errorf("secret %s: %w", name, err)
	}
	return writeFiles(dir, s.Data, items)
}

func (w *podWorker) writeConfigMap(ctx context.Context, dir, ns, name string, items []corev1.KeyToPath, opt *bool) error {
	cm, err := w.agent.cfg.Client.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		if apierrors.IsNotFound(err) && opt != nil && *opt {
			return writeFiles(dir, nil, nil)
		}
		return fmt.Errorf("configmap %s: %w", name, err)
	}
	data := map[string][]byte{}
	for k, v := range cm.Data {
		data[k] = []byte(v)
	}
	for k, v := range cm.BinaryData {
		data[k] = v
	}
	return writeFiles(dir, data, items)
}

func (w *podWorker) writeProjected(ctx context.Context, dir string, pod *corev1.Pod, p *corev1.ProjectedVolumeSource) error {
	if err := writeFiles(dir, nil, nil); err != nil {
		return err
	}
	for _, src := range p.Sources {
		var err error
		switch {
		case src.Secret != nil:
			err = w.writeSecret(ctx, dir+".tmp", pod.Namespace, src.Secret.Name, src.Secret.Items, src.Secret.Optional)
		case src.ConfigMap != nil:
			err = w.writeConfigMap(ctx, dir+".tmp", pod.Namespace, src.ConfigMap.Name, src.ConfigMap.Items, src.ConfigMap.Optional)
		case src.DownwardAPI != nil:
			data := map[string][]byte{}
			for _, item := range src.DownwardAPI.Items {
				if item.FieldRef != nil {
					v, ferr := w.fieldValue(pod, item.FieldRef.FieldPath)
					if ferr != nil {
						return ferr
					}
					data[item.Path] = []byte(v)
				}
			}
			err = writeFiles(dir+".tmp", data, nil)
		default:
			continue
		}
		if err != nil {
			return err
		}
		if err := mergeDir(dir+".tmp", dir); err != nil {
			return err
		}
	}
	return nil
}

// writeFiles replaces dir's content with data: every key as a file, or
// only items (key to path) when given.
func writeFiles(dir string, data map[string][]byte, items []corev1.KeyToPath) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	files := map[string][]byte{}
	if len(items) == 0 {
		for k, v := range data {
			files[k] = v
		}
	}
	for _, it := range items {
		v, ok := data[it.Key]
		if !ok {
			return fmt.Errorf("no key %q", it.Key)
		}
		files[it.Path] = v
	}
	for p, v := range files {
		f := filepath.Join(dir, filepath.Clean("/"+p))
		if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(f, v, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// mergeDir moves the files of src into dst and removes src.
func mergeDir(src, dst string) error {
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
			return err
		}
		return os.Rename(p, target)
	})
	if err != nil {
		return err
	}
	return os.RemoveAll(src)
}
