package backup_test

import (
	"archive/tar"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cozystack/tenantkit/backup"
	"github.com/cozystack/tenantkit/backup/backuptest"
	"github.com/cozystack/tenantkit/localenv"
)

const (
	cmPath     = "resources/configmaps/namespaces/ns-0/cm-%d.json"
	cmPrefPath = "resources/configmaps/v1-preferredversion/namespaces/ns-0/cm-%d.json"
)

// crafted is a damaged backup: an archive and resource list edited
// before upload, and optionally velero-backup.json or the raw archive
// bytes.
type crafted struct {
	name    string
	edit    func(t *testing.T, a *backuptest.Archive)
	meta    func(b map[string]any)
	raw     func(t *testing.T, a *backuptest.Archive, targz []byte) []byte
	kind    backup.ProblemKind
	item    string // the problem names this item ("" when about no one item)
	message string
}

// verifyCorpus lists one damaged backup per kind of corruption that Verify
// must report (issue 19), each with the typed problem it must raise.
var verifyCorpus = []crafted{
	{name: "archive and list both miss 2 items, metadata reports 12",
		edit: func(t *testing.T, a *backuptest.Archive) {
			removeCM(a, 3, 4)
			unlist(a, "ns-0/cm-3", "ns-0/cm-4")
		},
		kind: backup.ProblemProgress, message: "12 items, the archive 10"},
	{name: "progress claims 500 items",
		meta: func(b map[string]any) {
			b["status"].(map[string]any)["progress"] = map[string]any{"totalItems": 500, "itemsBackedUp": 500}
		},
		kind: backup.ProblemProgress, message: "500"},
	{name: "duplicate entry stands in for a missing item",
		edit: func(t *testing.T, a *backuptest.Archive) {
			for _, p := range []string{cmPath, cmPrefPath} {
				i := a.Index(fmt.Sprintf(p, 3))
				a.Entries[i] = a.Entries[a.Index(fmt.Sprintf(p, 2))]
			}
		},
		kind: backup.ProblemDuplicate, item: "v1/ConfigMap ns-0/cm-2"},
	{name: "list names an item the archive lacks, same counts",
		edit: func(t *testing.T, a *backuptest.Archive) {
			unlist(a, "ns-0/cm-3")
			a.List["v1/ConfigMap"] = append(a.List["v1/ConfigMap"], "ns-0/cm-99")
		},
		kind: backup.ProblemMissing, item: "v1/ConfigMap ns-0/cm-99"},
	{name: "list names one item twice and omits another",
		edit: func(t *testing.T, a *backuptest.Archive) {
			unlist(a, "ns-0/cm-3")
			a.List["v1/ConfigMap"] = append(a.List["v1/ConfigMap"], "ns-0/cm-2")
		},
		kind: backup.ProblemDuplicate, item: "v1/ConfigMap ns-0/cm-2"},
	{name: "list has 2 Secrets in place of 2 ConfigMaps",
		edit: func(t *testing.T, a *backuptest.Archive) {
			unlist(a, "ns-0/cm-3", "ns-0/cm-4")
			a.List["v1/Secret"] = []string{"ns-0/cm-3", "ns-0/cm-4"}
		},
		kind: backup.ProblemMissing, item: "v1/Secret ns-0/cm-3"},
	{name: "item body is not JSON",
		edit: func(t *testing.T, a *backuptest.Archive) {
			a.Entries[a.Index(fmt.Sprintf(cmPath, 5))].Body = []byte("{this is not json}")
		},
		kind: backup.ProblemItem, item: "resources/configmaps/namespaces/ns-0/cm-5.json"},
	{name: "item body names another item",
		edit: func(t *testing.T, a *backuptest.Archive) {
			e := &a.Entries[a.Index(fmt.Sprintf(cmPath, 5))]
			e.Body = []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-6","namespace":"ns-0"}}`)
		},
		kind: backup.ProblemItem, item: "resources/configmaps/namespaces/ns-0/cm-5.json"},
	{name: "second gzip member appended",
		raw: func(t *testing.T, a *backuptest.Archive, targz []byte) []byte {
			return append(targz, backuptest.GzipBytes([]byte("more"))...)
		},
		kind: backup.ProblemTrailingData},
	{name: "tar cut at an entry boundary",
		raw: func(t *testing.T, a *backuptest.Archive, targz []byte) []byte {
			a.Entries = a.Entries[:len(a.Entries)-1]
			cut, err := a.Tar(false)
			require.NoError(t, err)
			return backuptest.GzipBytes(cut)
		},
		kind: backup.ProblemTruncated},
	{name: "path traversal entry",
		edit: func(t *testing.T, a *backuptest.Archive) {
			a.Entries = append(a.Entries, backuptest.Entry{Header: tar.Header{Name: "resources/../../etc/cron.d/x.json", Typeflag: tar.TypeReg, Mode: 0o755}, Body: []byte("{}")})
		},
		kind: backup.ProblemUnsafeEntry, item: "resources/../../etc/cron.d/x.json"},
	{name: "symlink entry",
		edit: func(t *testing.T, a *backuptest.Archive) {
			a.Entries = append(a.Entries, backuptest.Entry{Header: tar.Header{Name: "resources/secrets/namespaces/ns-0/x.json", Typeflag: tar.TypeSymlink, Linkname: "/etc/shadow", Mode: 0o777}})
		},
		kind: backup.ProblemUnsafeEntry, item: "resources/secrets/namespaces/ns-0/x.json"},
	{name: "preferred-version copy missing",
		edit: func(t *testing.T, a *backuptest.Archive) { a.Remove(fmt.Sprintf(cmPrefPath, 7)) },
		kind: backup.ProblemPreferredCopy, item: "v1/ConfigMap ns-0/cm-7"},
	{name: "resource list disagrees with the archive",
		edit: func(t *testing.T, a *backuptest.Archive) {
			a.List = backup.ResourceList{"v1/ConfigMap": {"ns-0/cm-0"}}
		},
		kind: backup.ProblemUnlisted, item: "v1/ConfigMap ns-0/cm-1", message: "not in the resource list"},
}

func removeCM(a *backuptest.Archive, idx ...int) {
	for _, i := range idx {
		a.Remove(fmt.Sprintf(cmPath, i), fmt.Sprintf(cmPrefPath, i))
	}
}

func unlist(a *backuptest.Archive, items ...string) {
	for _, it := range items {
		var keep []string
		for _, x := range a.List["v1/ConfigMap"] {
			if x != it {
				keep = append(keep, x)
			}
		}
		a.List["v1/ConfigMap"] = keep
	}
}

// craftFiles returns the files of backup name as c crafts them.
func craftFiles(t *testing.T, name string, c crafted) map[string][]byte {
	spec := backuptest.Spec{Name: name}
	a, err := spec.NewArchive()
	require.NoError(t, err)
	if c.edit != nil {
		c.edit(t, a)
	}
	targz, err := a.TarGz()
	require.NoError(t, err)
	if c.raw != nil {
		targz = c.raw(t, a, targz)
	}
	list, err := a.ListGz()
	require.NoError(t, err)
	meta := map[string]any{}
	require.NoError(t, json.Unmarshal(spec.BackupJSON(), &meta))
	if c.meta != nil {
		c.meta(meta)
	}
	metaJSON, err := json.Marshal(meta)
	require.NoError(t, err)
	return map[string][]byte{
		name + ".tar.gz":                targz,
		name + "-resource-list.json.gz": list,
		name + "-logs.gz":               backuptest.GzipBytes([]byte("level=info msg=done\n")),
		name + "-results.gz":            backuptest.GzipBytes([]byte(`{"errors":{},"warnings":{}}`)),
		"velero-backup.json":            metaJSON,
	}
}

// putCrafted writes backup name, crafted by c, to the bucket.
func putCrafted(t *testing.T, bucket backuptest.Bucket, name string, c crafted) {
	for f, data := range craftFiles(t, name, c) {
		bucket.PutObjectT(t, bucket.BackupKey(name, f), data)
	}
}

// TestVerify_corpus verifies each crafted backup from memory
// (backuptest.MemObjects): the same checks as on S3, without a server.
func TestVerify_corpus(t *testing.T) {
	rep, err := verifyInMemory(t, "intact", craftFiles(t, "intact", crafted{}))
	require.NoError(t, err, "the unedited crafted backup verifies")
	require.Equal(t, 12, rep.Items)
	for i, c := range verifyCorpus {
		t.Run(c.name, func(t *testing.T) {
			name := fmt.Sprintf("crafted-%02d", i)
			rep, err := verifyInMemory(t, name, craftFiles(t, name, c))
			require.ErrorIs(t, err, backup.ErrCorrupt)
			t.Logf("%v", rep.Problems)
			requireProblem(t, rep, c.kind, c.item, c.message)
		})
	}
}

// TestStore_verifyCorpus uploads each crafted backup to versitygw and
// checks that Verify reports it with the right typed problem, naming the
// item at fault.
func TestStore_verifyCorpus(t *testing.T) {
	e := startS3(t, localenv.Config{SkipAPIServer: true})
	ctx := context.Background()
	s := e.store(t, backup.S3Config{}, "")

	putCrafted(t, e.bucket, "intact", crafted{})
	rep, err := s.Verify(ctx, "intact", backup.VerifyOptions{})
	require.NoError(t, err, "the unedited crafted backup verifies")
	require.Equal(t, 12, rep.Items)

	for i, c := range verifyCorpus {
		t.Run(c.name, func(t *testing.T) {
			name := fmt.Sprintf("crafted-%02d", i)
			putCrafted(t, e.bucket, name, c)
			rep, err := s.Verify(ctx, name, backup.VerifyOptions{})
			require.ErrorIs(t, err, backup.ErrCorrupt)
			var verr *backup.VerifyError
			require.True(t, errors.As(err, &verr))
			require.Same(t, rep, verr.Report)
			requireProblem(t, rep, c.kind, c.item, c.message)
		})
	}
}

// requireProblem fails t unless rep has a problem of kind naming item
// (when given) whose message contains message (when given).
func requireProblem(t *testing.T, rep *backup.VerifyReport, kind backup.ProblemKind, item, message string) {
	t.Helper()
	for _, p := range rep.Problems {
		if p.Kind == kind && (item == "" || p.Item == item) && strings.Contains(p.Message, message) {
			var target backup.Problem
			require.True(t, errors.As(error(p), &target))
			return
		}
	}
	t.Fatalf("no %s problem naming %q with %q in %v", kind, item, message, rep.Problems)
}

// TestVerify_acceptsVeleroVariants checks layouts Velero really writes
// that the corpus does not: they must verify.
func TestVerify_acceptsVeleroVariants(t *testing.T) {
	tests := []struct {
		name  string
		c     crafted
		notes string
	}{
		{name: "PartiallyFailed: a failed item stays listed and counted, with no file", c: crafted{
			edit: func(t *testing.T, a *backuptest.Archive) { removeCM(a, 4) },
			meta: func(b map[string]any) { b["status"].(map[string]any)["phase"] = "PartiallyFailed" },
		}, notes: "v1/ConfigMap ns-0/cm-4 is listed but not in the archive"},
		{name: "EnableAPIGroupVersions: another version's copy, listed under its version", c: crafted{
			edit: func(t *testing.T, a *backuptest.Archive) {
				body := []byte(`{"apiVersion":"apps/v1beta2","kind":"Deployment","metadata":{"name":"web","namespace":"ns-0"}}`)
				a.Entries = append(a.Entries, backuptest.Entry{Header: tar.Header{Name: "resources/deployments.apps/v1beta2/namespaces/ns-0/web.json", Typeflag: tar.TypeReg, Mode: 0o755}, Body: body})
				a.List["apps/v1beta2/Deployment"] = []string{"ns-0/web"}
			},
			meta: func(b map[string]any) {
				b["status"].(map[string]any)["progress"] = map[string]any{"totalItems": 13, "itemsBackedUp": 13}
			},
		}},
		{name: "no preferred-version copies at all (before Velero 1.4)", c: crafted{
			edit: func(t *testing.T, a *backuptest.Archive) {
				for i := len(a.Entries) - 1; i >= 0; i-- {
					if strings.Contains(a.Entries[i].Header.Name, "-preferredversion/") {
						a.Remove(a.Entries[i].Header.Name)
					}
				}
			},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := verifyInMemory(t, "v", craftFiles(t, "v", tt.c))
			require.NoError(t, err)
			require.True(t, rep.OK())
			if tt.notes != "" {
				require.Contains(t, strings.Join(rep.Notes, "\n"), tt.notes)
			}
		})
	}
}

// TestVerify_problemsAreBounded checks that a backup with thousands of
// problems lists 100 and counts the rest.
func TestVerify_problemsAreBounded(t *testing.T) {
	c := crafted{edit: func(t *testing.T, a *backuptest.Archive) {
		a.List = backup.ResourceList{"v1/Secret": nil}
		for i := 0; i < 300; i++ {
			a.List["v1/Secret"] = append(a.List["v1/Secret"], fmt.Sprintf("ns-0/s-%d", i))
		}
	}}
	rep, err := verifyInMemory(t, "many", craftFiles(t, "many", c))
	require.ErrorIs(t, err, backup.ErrCorrupt)
	require.Len(t, rep.Problems, 100)
	require.Positive(t, rep.ProblemsLeftOut)
	require.Contains(t, err.Error(), "more problems")
	var p backup.Problem
	require.ErrorAs(t, err, &p)
	require.Equal(t, rep.Problems[0], p)
}

// verifyInMemory puts backup name's files in a backuptest.MemObjects and
// verifies it: the same checks as on S3, without a server.
func verifyInMemory(t *testing.T, name string, files map[string][]byte) (*backup.VerifyReport, error) {
	t.Helper()
	objects := &backuptest.MemObjects{}
	for f, data := range files {
		objects.Put("backups/"+name+"/"+f, data)
	}
	s, err := backup.NewStore(backup.StoreConfig{Objects: objects})
	require.NoError(t, err)
	return s.Verify(context.Background(), name, backup.VerifyOptions{})
}
