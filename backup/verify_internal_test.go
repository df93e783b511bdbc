package backup

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// verifyFiles runs Store.Verify over backup name's files held in memory.
func verifyFiles(name string, files map[string][]byte) (*VerifyReport, error) {
	objects := mapObjects{}
	for f, data := range files {
		objects["backups/"+name+"/"+f] = data
	}
	s, err := NewStore(StoreConfig{Objects: objects})
	if err != nil {
		return nil, err
	}
	return s.Verify(context.Background(), name, VerifyOptions{})
}

// mapObjects is an ObjectStore in memory (backuptest.MemObjects, which
// this package's internal tests cannot import).
type mapObjects map[string][]byte

func (m mapObjects) Folders(context.Context, string) ([]string, error) { return nil, nil }

func (m mapObjects) List(_ context.Context, prefix string) ([]Object, error) {
	var out []Object
	for k, data := range m {
		if name, ok := strings.CutPrefix(k, prefix); ok {
			out = append(out, Object{Key: k, Name: name, Size: int64(len(data))})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (m mapObjects) Open(_ context.Context, key string) (io.ReadCloser, error) {
	data, ok := m[key]
	if !ok {
		return nil, &ObjectNotFoundError{Where: "memory", Key: key}
	}
	return io.NopCloser(bytes.NewReader(data)), nil
}

func TestScanItem(t *testing.T) {
	tests := []struct {
		in                       string
		apiVersion, kind, ns, nm string
		bad                      string
		err                      bool
	}{
		{in: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"n"}}`, apiVersion: "v1", kind: "ConfigMap", ns: "n", nm: "a"},
		{in: ` {"kind":"A","metadata":{"name":"x"},"metadata":{"name":"y"}} `, kind: "A", nm: "y"},
		{in: `{"kin\u0064":"Esc","metadata":{"labels":{"name":"no"},"name":"n\"q"}}`, kind: "Esc", nm: `n"q`},
		{in: `{"apiVersion":1,"apiVersion":"v1"}`, apiVersion: "v1"},
		{in: `{"apiVersion":"v1","apiVersion":null}`, bad: "apiVersion"},
		{in: `{"metadata":{"name":"a"},"metadata":[]}`, bad: "metadata"},
		{in: `{"Kind":"upper"}`},
		{in: `{this is not json}`, err: true},
		{in: `{"a":1}{}`, err: true},
		{in: `[]`, err: true},
		{in: `{"a":"\x01"}`, err: true},
		{in: `{"a":01}`, err: true},
		{in: `{"a":-1.5e+3,"b":[true,false,null,{}],"c":"\u00e9\/"}`},
		{in: `{"a":"` + strings.Repeat("x", 100) + `\"` + strings.Repeat("y", 13) + `"}`},
		{in: strings.Repeat(`{"a":`, maxJSONDepth) + `1` + strings.Repeat(`}`, maxJSONDepth)},
		{in: strings.Repeat(`{"a":`, maxJSONDepth+1) + `1` + strings.Repeat(`}`, maxJSONDepth+1), err: true},
	}
	for _, tt := range tests {
		id, err := scanItem([]byte(tt.in))
		valid := json.Valid([]byte(tt.in))
		if tt.err {
			require.Error(t, err, tt.in)
			continue
		}
		require.NoError(t, err, tt.in)
		require.True(t, valid, "encoding/json disagrees on %s", tt.in)
		require.Equal(t, tt.bad, id.badField(), tt.in)
		if tt.bad == "" {
			require.Equal(t, []string{tt.apiVersion, tt.kind, tt.ns, tt.nm},
				[]string{string(id.apiVersion), string(id.kind), string(id.namespace), string(id.name)}, tt.in)
		}
	}
}

// FuzzScanItem checks the hand-written scanner against encoding/json: the
// same inputs are valid, and the identity is what a map decode finds.
func FuzzScanItem(f *testing.F) {
	f.Add([]byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"demo"},"spec":{"replicas":1}}`))
	f.Add([]byte(`{"a":[1,2.5e3,-0,"\ud83d\ude00"],"metadata":null}`))
	f.Add([]byte(`{this is not json}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if validJSON(b) != json.Valid(b) {
			t.Fatalf("validJSON=%v, json.Valid=%v", validJSON(b), json.Valid(b))
		}
		id, err := scanItem(b)
		var m map[string]any
		jerr := json.Unmarshal(b, &m)
		if (err == nil) != (jerr == nil && m != nil) {
			t.Fatalf("scanItem err=%v, json.Unmarshal err=%v", err, jerr)
		}
		if err != nil || !utf8.Valid(b) {
			return
		}
		str := func(v any, field string) string {
			switch s := v.(type) {
			case string:
				return s
			case nil:
				return ""
			}
			if id.badField() == "" {
				t.Fatalf("%s: %v is not a string, but no field is bad", field, v)
			}
			return ""
		}
		if id.bad != 0 {
			return
		}
		meta, _ := m["metadata"].(map[string]any)
		want := []string{str(m["apiVersion"], "apiVersion"), str(m["kind"], "kind"), str(meta["namespace"], "namespace"), str(meta["name"], "name")}
		got := []string{string(id.apiVersion), string(id.kind), string(id.namespace), string(id.name)}
		require.Equal(t, want, got)
	})
}

// fuzzSeedFiles is a 12-item backup whose archive the fuzzer varies.
func fuzzSeedFiles(t testing.TB) (map[string][]byte, []byte) {
	t.Helper()
	files := map[string][]byte{}
	var list bytes.Buffer
	zl := gzip.NewWriter(&list)
	_, _ = zl.Write([]byte(`{"apps/v1/Deployment":["ns-0/web"],"v1/ConfigMap":["ns-0/cm-0","ns-0/cm-1"],"v1/Namespace":["ns-0"]}`))
	_ = zl.Close()
	files["b-resource-list.json.gz"] = list.Bytes()
	files["velero-backup.json"] = []byte(`{"apiVersion":"velero.io/v1","kind":"Backup","metadata":{"name":"b"},"status":{"phase":"Completed","progress":{"totalItems":4,"itemsBackedUp":4}}}`)
	var arch bytes.Buffer
	zw := gzip.NewWriter(&arch)
	tw := tar.NewWriter(zw)
	put := func(name, body string) {
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: name, Size: int64(len(body)), Mode: 0o755, Typeflag: tar.TypeReg}))
		_, err := tw.Write([]byte(body))
		require.NoError(t, err)
	}
	put("metadata/version", "1.1.0\n")
	item := func(dir, scope, name, body string) {
		put("resources/"+dir+"/"+scope+"/"+name+".json", body)
		put("resources/"+dir+"/v1-preferredversion/"+scope+"/"+name+".json", body)
	}
	item("namespaces", "cluster", "ns-0", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"ns-0"}}`)
	for _, cm := range []string{"cm-0", "cm-1"} {
		item("configmaps", "namespaces/ns-0", cm, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"`+cm+`","namespace":"ns-0"},"data":{"k":"v"}}`)
	}
	item("deployments.apps", "namespaces/ns-0", "web", `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"namespace":"ns-0","name":"web"}}`)
	require.NoError(t, tw.Close())
	require.NoError(t, zw.Close())
	return files, arch.Bytes()
}

// FuzzVerifyArchive runs Verify over whole archives. Whatever the bytes,
// it returns typed problems and never panics; and when it finds none, an
// independent reading (compress/gzip, archive/tar, encoding/json) confirms
// the archive holds exactly the listed items, each a regular file whose
// JSON parses and names the item its path names.
func FuzzVerifyArchive(f *testing.F) {
	files, archive := fuzzSeedFiles(f)
	f.Add(archive)
	f.Add(append(append([]byte{}, archive...), archive...))
	f.Add(archive[:len(archive)/2])
	f.Fuzz(func(t *testing.T, data []byte) {
		in := map[string][]byte{}
		for k, v := range files {
			in[k] = v
		}
		in["b.tar.gz"] = data
		rep, err := verifyFiles("b", in)
		require.NotNil(t, rep)
		if err != nil {
			require.ErrorIs(t, err, ErrCorrupt)
			require.False(t, rep.OK())
			for _, p := range rep.Problems {
				require.NotEmpty(t, p.Kind)
				require.ErrorIs(t, p, ErrCorrupt)
			}
			return
		}
		require.Equal(t, 4, rep.Items)
		confirmArchive(t, data, []string{"apps/v1/Deployment ns-0/web", "v1/ConfigMap ns-0/cm-0", "v1/ConfigMap ns-0/cm-1", "v1/Namespace ns-0"})
	})
}

// confirmArchive reads data with the standard library only and checks
// that it holds the listed items and nothing unsafe or malformed.
func confirmArchive(t *testing.T, data []byte, listed []string) {
	src := bytes.NewReader(data)
	zr, err := gzip.NewReader(src)
	require.NoError(t, err)
	zr.Multistream(false)
	tr := tar.NewReader(zr)
	var items []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		require.Equal(t, byte(tar.TypeReg), h.Typeflag, h.Name)
		require.True(t, fs.ValidPath(h.Name), h.Name)
		body, err := io.ReadAll(tr)
		require.NoError(t, err)
		p, ok := parseItemPath(h.Name)
		if !ok {
			continue
		}
		var obj map[string]any
		require.NoError(t, json.Unmarshal(body, &obj), h.Name)
		meta, _ := obj["metadata"].(map[string]any)
		name, _ := meta["name"].(string)
		ns, _ := meta["namespace"].(string)
		apiVersion, _ := obj["apiVersion"].(string)
		kind, _ := obj["kind"].(string)
		require.Equal(t, p.name, name)
		require.Equal(t, p.namespace, ns)
		if !p.preferred {
			id := apiVersion + "/" + kind + " " + name
			if ns != "" {
				id = apiVersion + "/" + kind + " " + ns + "/" + name
			}
			items = append(items, id)
		}
	}
	rest, err := io.ReadAll(zr)
	require.NoError(t, err)
	require.True(t, allZero(rest), "data after the tarball")
	require.Zero(t, src.Len(), "data after the gzip member")
	sort.Strings(items)
	require.Equal(t, listed, items)
}
