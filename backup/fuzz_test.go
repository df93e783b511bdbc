package backup_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/cozystack/tenantkit/backup"
	"github.com/cozystack/tenantkit/backup/backuptest"
)

func FuzzDecodeBackup(f *testing.F) {
	f.Add(backuptest.Spec{Name: "b"}.BackupJSON())
	f.Add([]byte(`{"apiVersion":"velero.io/v1","kind":"Backup","metadata":{"name":"x"},"status":{"phase":"Completed","progress":{"totalItems":-1}}}`))
	f.Add([]byte(`{"kind":"Restore"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := backup.DecodeBackup(data)
		if err != nil {
			if !errors.Is(err, backup.ErrMalformed) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		if b.Name == "" {
			t.Fatal("decoded a backup without a name")
		}
		_ = backup.Describe(b).String()
	})
}

func FuzzDecodeResourceList(f *testing.F) {
	f.Add([]byte(`{"v1/ConfigMap":["demo/a","demo/b"],"apps/v1/Deployment":["demo/web"],"v1/Namespace":["demo"]}`))
	f.Add([]byte(`{"v1/ConfigMap":[""]}`))
	f.Add([]byte(`{"x":["a"]} trailing`))
	f.Fuzz(func(t *testing.T, data []byte) {
		list, err := backup.DecodeResourceList(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, backup.ErrMalformed) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		for gvk, items := range list {
			if gvk == "" {
				t.Fatal("empty key accepted")
			}
			for _, it := range items {
				if it == "" {
					t.Fatal("empty item accepted")
				}
			}
		}
	})
}

func FuzzDecodeResults(f *testing.F) {
	f.Add([]byte(`{"errors":{"velero":["x"]},"warnings":{"namespaces":{"demo":["y"]}}}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := backup.DecodeResults(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, backup.ErrMalformed) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		if len(res.Errors.Messages()) != res.Errors.Count() {
			t.Fatal("Messages and Count disagree")
		}
	})
}

func FuzzDecodeRestoredResources(f *testing.F) {
	f.Add([]byte(`{"v1/ConfigMap":["demo/a(created)","demo/b(failed)"],"v1/Namespace":["demo(created)"]}`))
	f.Add([]byte(`{"v1/ConfigMap":["demo/a"]}`))
	f.Add([]byte(`{"v1/ConfigMap":["(created)"]} x`))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := backup.DecodeRestoredResources(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, backup.ErrMalformed) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		for id, res := range got {
			if id == "" || (res != "created" && res != "updated" && res != "skipped" && res != "failed") {
				t.Fatalf("accepted %q -> %q", id, res)
			}
		}
	})
}
