package backuptest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path"
	"sort"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/cozystack/tenantkit/backup"
)

// Bucket writes and inspects objects of one bucket for tests.
type Bucket struct {
	// Client is an S3 client with write access.
	Client *s3.Client
	// Name is the bucket.
	Name string
	// Prefix is the backup storage location's prefix ("" for the root).
	Prefix string
}

func (b Bucket) key(parts ...string) string {
	if b.Prefix != "" {
		parts = append([]string{b.Prefix}, parts...)
	}
	return path.Join(parts...)
}

// BackupKey returns the key of file in backup name's folder.
func (b Bucket) BackupKey(name, file string) string { return b.key("backups", name, file) }

// PutBackup writes a complete synthetic backup in Velero's layout:
// velero-backup.json, <name>.tar.gz, -resource-list.json.gz, -logs.gz and
// -results.gz. Large archives go through a temporary file, so memory use
// stays small. It returns the resource list.
func (b Bucket) PutBackup(t testing.TB, spec Spec) backup.ResourceList {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "archive-*.tar.gz")
	if err != nil {
		t.Fatalf("backuptest: %v", err)
	}
	defer f.Close()
	list, err := spec.WriteArchive(f)
	if err != nil {
		t.Fatalf("backuptest: write archive: %v", err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		t.Fatalf("backuptest: %v", err)
	}
	b.put(t, b.BackupKey(spec.Name, spec.Name+".tar.gz"), f)
	listJSON, err := json.Marshal(list)
	if err != nil {
		t.Fatalf("backuptest: %v", err)
	}
	b.PutObject(t, b.BackupKey(spec.Name, spec.Name+"-resource-list.json.gz"), gzipBytes(listJSON))
	b.PutObject(t, b.BackupKey(spec.Name, spec.Name+"-logs.gz"), gzipBytes([]byte("time=\"2026-01-01T00:00:00Z\" level=info msg=\"Backup completed\"\n")))
	b.PutObject(t, b.BackupKey(spec.Name, spec.Name+"-results.gz"), gzipBytes([]byte(`{"errors":{},"warnings":{"namespaces":{"ns-0":["a warning"]}}}`)))
	b.PutObject(t, b.BackupKey(spec.Name, "velero-backup.json"), spec.BackupJSON())
	return list
}

// PutObject writes one object.
func (b Bucket) PutObject(t testing.TB, key string, data []byte) {
	t.Helper()
	b.put(t, key, bytes.NewReader(data))
}

func (b Bucket) put(t testing.TB, key string, body io.ReadSeeker) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if _, err := b.Client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(b.Name), Key: aws.String(key), Body: body}); err != nil {
		t.Fatalf("backuptest: put %s: %v", key, err)
	}
}

// Object reads one object whole.
func (b Bucket) Object(t testing.TB, key string) []byte {
	t.Helper()
	out, err := b.Client.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String(b.Name), Key: aws.String(key)})
	if err != nil {
		t.Fatalf("backuptest: get %s: %v", key, err)
	}
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
	if err != nil {
		t.Fatalf("backuptest: read %s: %v", key, err)
	}
	return data
}

// Keys lists every key under the location prefix, sorted.
func (b Bucket) Keys(t testing.TB) []string {
	t.Helper()
	var keys []string
	prefix := ""
	if b.Prefix != "" {
		prefix = b.Prefix + "/"
	}
	p := s3.NewListObjectsV2Paginator(b.Client, &s3.ListObjectsV2Input{Bucket: aws.String(b.Name), Prefix: aws.String(prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatalf("backuptest: list %s: %v", b.Name, err)
		}
		for _, o := range page.Contents {
			keys = append(keys, aws.ToString(o.Key))
		}
	}
	sort.Strings(keys)
	return keys
}
