package backuptest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"testing"

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
func (b Bucket) PutBackup(ctx context.Context, spec Spec) (backup.ResourceList, error) {
	f, err := os.CreateTemp("", "backuptest-archive-*.tar.gz")
	if err != nil {
		return nil, fmt.Errorf("backuptest: %w", err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	list, err := spec.writeArchive(f)
	if err != nil {
		return nil, fmt.Errorf("backuptest: write archive: %w", err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("backuptest: %w", err)
	}
	if err := b.put(ctx, b.BackupKey(spec.Name, spec.Name+".tar.gz"), f); err != nil {
		return nil, err
	}
	for file, data := range spec.metaFiles(list) {
		if err := b.PutObject(ctx, b.BackupKey(spec.Name, file), data); err != nil {
			return nil, err
		}
	}
	return list, nil
}

// PutBackupT is PutBackup for tests: it fails t on error.
func (b Bucket) PutBackupT(t testing.TB, spec Spec) backup.ResourceList {
	t.Helper()
	list, err := b.PutBackup(t.Context(), spec)
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// PutObject writes one object.
func (b Bucket) PutObject(ctx context.Context, key string, data []byte) error {
	return b.put(ctx, key, bytes.NewReader(data))
}

// PutObjectT is PutObject for tests: it fails t on error.
func (b Bucket) PutObjectT(t testing.TB, key string, data []byte) {
	t.Helper()
	if err := b.PutObject(t.Context(), key, data); err != nil {
		t.Fatal(err)
	}
}

func (b Bucket) put(ctx context.Context, key string, body io.ReadSeeker) error {
	if _, err := b.Client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(b.Name), Key: aws.String(key), Body: body}); err != nil {
		return fmt.Errorf("backuptest: put %s: %w", key, err)
	}
	return nil
}

// Object reads one object whole.
func (b Bucket) Object(ctx context.Context, key string) ([]byte, error) {
	out, err := b.Client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(b.Name), Key: aws.String(key)})
	if err != nil {
		return nil, fmt.Errorf("backuptest: get %s: %w", key, err)
	}
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
	if err != nil {
		return nil, fmt.Errorf("backuptest: read %s: %w", key, err)
	}
	return data, nil
}

// ObjectT is Object for tests: it fails t on error.
func (b Bucket) ObjectT(t testing.TB, key string) []byte {
	t.Helper()
	data, err := b.Object(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// Keys lists every key under the location prefix, sorted.
func (b Bucket) Keys(ctx context.Context) ([]string, error) {
	var keys []string
	prefix := ""
	if b.Prefix != "" {
		prefix = b.Prefix + "/"
	}
	p := s3.NewListObjectsV2Paginator(b.Client, &s3.ListObjectsV2Input{Bucket: aws.String(b.Name), Prefix: aws.String(prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("backuptest: list %s: %w", b.Name, err)
		}
		for _, o := range page.Contents {
			keys = append(keys, aws.ToString(o.Key))
		}
	}
	sort.Strings(keys)
	return keys, nil
}

// KeysT is Keys for tests: it fails t on error.
func (b Bucket) KeysT(t testing.TB) []string {
	t.Helper()
	keys, err := b.Keys(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return keys
}
