package backuptest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cozystack/tenantkit/backup"
)

// MemObjects is a backup.ObjectStore held in memory, for tests. The zero
// value is empty and ready; Put adds objects. It is safe for concurrent
// use.
type MemObjects struct {
	mu      sync.RWMutex
	objects map[string][]byte
}

// Put stores data (not copied) as object key, replacing any object there.
func (m *MemObjects) Put(key string, data []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.objects == nil {
		m.objects = map[string][]byte{}
	}
	m.objects[key] = data
}

// Folders returns the folders directly under prefix.
func (m *MemObjects) Folders(ctx context.Context, prefix string) ([]string, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	seen := map[string]bool{}
	for k := range m.objects {
		rest, ok := strings.CutPrefix(k, prefix)
		if dir, _, found := strings.Cut(rest, "/"); ok && found && dir != "" {
			seen[dir] = true
		}
	}
	var out []string
	for d := range seen {
		out = append(out, d)
	}
	sort.Strings(out)
	return out, ctx.Err()
}

// List returns every object under prefix.
func (m *MemObjects) List(ctx context.Context, prefix string) ([]backup.Object, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []backup.Object
	for k, data := range m.objects {
		if name, ok := strings.CutPrefix(k, prefix); ok {
			out = append(out, backup.Object{Key: k, Name: name, Size: int64(len(data)), LastModified: time.Unix(0, 0).UTC()})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, ctx.Err()
}

// Open returns a reader of object key, or a *backup.ObjectNotFoundError.
func (m *MemObjects) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	data, ok := m.objects[key]
	if !ok {
		return nil, &backup.ObjectNotFoundError{Where: "memory", Key: key}
	}
	return io.NopCloser(bytes.NewReader(data)), ctx.Err()
}

// Files returns the files of a complete synthetic backup in Velero's
// layout, by name inside the backup's folder: velero-backup.json,
// <name>.tar.gz, -resource-list.json.gz, -logs.gz and -results.gz. It
// holds the archive in memory; Bucket.PutBackup streams large ones.
func (s Spec) Files() (map[string][]byte, error) {
	var archive bytes.Buffer
	list, err := s.writeArchive(&archive)
	if err != nil {
		return nil, fmt.Errorf("backuptest: write archive: %w", err)
	}
	files := s.metaFiles(list)
	files[s.Name+".tar.gz"] = archive.Bytes()
	return files, nil
}

// PutBackup stores backup spec's files (see Spec.Files) under
// backups/<name>/.
func (m *MemObjects) PutBackup(spec Spec) error {
	files, err := spec.Files()
	if err != nil {
		return err
	}
	for f, data := range files {
		m.Put("backups/"+spec.Name+"/"+f, data)
	}
	return nil
}

// metaFiles returns a backup's files other than its archive.
func (s Spec) metaFiles(list backup.ResourceList) map[string][]byte {
	listJSON, _ := json.Marshal(list) // a map of string slices always encodes
	return map[string][]byte{
		s.Name + "-resource-list.json.gz": gzipBytes(listJSON),
		s.Name + "-logs.gz":               gzipBytes([]byte("time=\"2026-01-01T00:00:00Z\" level=info msg=\"Backup completed\"\n")),
		s.Name + "-results.gz":            gzipBytes([]byte(`{"errors":{},"warnings":{"namespaces":{"ns-0":["a warning"]}}}`)),
		"velero-backup.json":              s.BackupJSON(),
	}
}
