package backuptest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	velerov1 "github.com/vmware-tanzu/velero/pkg/apis/velero/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cozystack/tenantkit/backup"
)

// Spec describes a synthetic backup. The zero value (plus a Name) is one
// namespace with ten ConfigMaps and a Deployment.
type Spec struct {
	// Name is the backup's name. Required.
	Name string
	// Namespaces is the number of namespaces (ns-0, ns-1, ...). Default 1.
	Namespaces int
	// ConfigMaps is the number of ConfigMaps per namespace. Default 10.
	ConfigMaps int
	// PayloadBytes is the size of each ConfigMap's random payload before
	// base64. Default 256.
	PayloadBytes int
	// Phase is the phase written to velero-backup.json. Default Completed.
	Phase velerov1.BackupPhase
	// Started is the backup's start time. Default: 2026-01-01T00:00:00Z.
	Started time.Time
	// Seed makes the payload reproducible.
	Seed uint64
	// CompressionLevel is the gzip level. Default gzip.BestSpeed.
	CompressionLevel int
}

func (s Spec) withDefaults() Spec {
	if s.Namespaces == 0 {
		s.Namespaces = 1
	}
	if s.ConfigMaps == 0 {
		s.ConfigMaps = 10
	}
	if s.PayloadBytes == 0 {
		s.PayloadBytes = 256
	}
	if s.Phase == "" {
		s.Phase = velerov1.BackupPhaseCompleted
	}
	if s.Started.IsZero() {
		s.Started = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	if s.CompressionLevel == 0 {
		s.CompressionLevel = gzip.BestSpeed
	}
	return s
}

// Items returns the number of items the backup holds: per namespace its
// ConfigMaps, one Deployment and the Namespace object.
func (s Spec) Items() int {
	s = s.withDefaults()
	return s.Namespaces * (s.ConfigMaps + 2)
}

// BackupJSON returns velero-backup.json for the spec.
func (s Spec) BackupJSON() []byte {
	s = s.withDefaults()
	start := metav1.NewTime(s.Started)
	end := metav1.NewTime(s.Started.Add(time.Minute))
	b := velerov1.Backup{
		TypeMeta:   metav1.TypeMeta{APIVersion: "velero.io/v1", Kind: "Backup"},
		ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: "cozy-velero"},
		Spec:       velerov1.BackupSpec{StorageLocation: "default", TTL: metav1.Duration{Duration: 720 * time.Hour}},
		Status: velerov1.BackupStatus{Phase: s.Phase, Version: 1, FormatVersion: "1.1.0",
			StartTimestamp: &start, CompletionTimestamp: &end,
			Progress: &velerov1.BackupProgress{TotalItems: s.Items(), ItemsBackedUp: s.Items()}},
	}
	data, _ := json.Marshal(b) // a plain struct: cannot fail
	return data
}

// writeArchive writes the backup's <name>.tar.gz to w in Velero's layout
// (metadata/version, then each item under resources/ twice: unversioned
// and in its v1-preferredversion folder) and returns the matching
// resource list.
func (s Spec) writeArchive(w io.Writer) (backup.ResourceList, error) {
	s = s.withDefaults()
	zw, err := gzip.NewWriterLevel(w, s.CompressionLevel)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(zw)
	list := backup.ResourceList{}
	now := s.Started
	put := func(name string, data []byte) error {
		if err := tw.WriteHeader(&tar.Header{Name: name, Size: int64(len(data)), Mode: 0o755, Typeflag: tar.TypeReg, ModTime: now}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	item := func(resource, gvk, ns, name string, obj map[string]any) error {
		data, err := json.Marshal(obj)
		if err != nil {
			return err
		}
		scope := "namespaces/" + ns
		id := ns + "/" + name
		if ns == "" {
			scope, id = "cluster", name
		}
		for _, dir := range []string{"resources/" + resource + "/", "resources/" + resource + "/v1-preferredversion/"} {
			if err := put(dir+scope+"/"+name+".json", data); err != nil {
				return err
			}
		}
		list[gvk] = append(list[gvk], id)
		return nil
	}
	if err := put("metadata/version", []byte("1.1.0\n")); err != nil {
		return nil, err
	}
	rng := rand.NewChaCha8(seed32(s.Seed))
	raw := make([]byte, s.PayloadBytes)
	for n := 0; n < s.Namespaces; n++ {
		ns := fmt.Sprintf("ns-%d", n)
		if err := item("namespaces", "v1/Namespace", "", ns, object("v1", "Namespace", "", ns, nil)); err != nil {
			return nil, err
		}
		for i := 0; i < s.ConfigMaps; i++ {
			_, _ = rng.Read(raw)
			name := fmt.Sprintf("cm-%d", i)
			obj := object("v1", "ConfigMap", ns, name, map[string]any{"data": map[string]string{"payload": base64.StdEncoding.EncodeToString(raw)}})
			if err := item("configmaps", "v1/ConfigMap", ns, name, obj); err != nil {
				return nil, err
			}
		}
		dep := object("apps/v1", "Deployment", ns, "web", map[string]any{"spec": map[string]any{"replicas": 1}})
		if err := item("deployments.apps", "apps/v1/Deployment", ns, "web", dep); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return list, zw.Close()
}

func object(apiVersion, kind, ns, name string, extra map[string]any) map[string]any {
	meta := map[string]any{"name": name}
	if ns != "" {
		meta["namespace"] = ns
	}
	obj := map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": meta}
	for k, v := range extra {
		obj[k] = v
	}
	return obj
}

func seed32(s uint64) [32]byte {
	var out [32]byte
	for i := 0; i < 8; i++ {
		out[i] = byte(s >> (8 * i))
	}
	return out
}

// gzipBytes compresses data.
func gzipBytes(data []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write(data) // writes to memory cannot fail
	_ = zw.Close()
	return buf.Bytes()
}
