package backup

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	velerov1 "github.com/vmware-tanzu/velero/pkg/apis/velero/v1"
)

// File names in a backup's folder (pkg/persistence/object_store_layout.go).
const (
	metadataFile = "velero-backup.json"
	maxJSONSize  = 16 << 20 // velero-backup.json and other small files
)

func archiveFile(name string) string      { return name + ".tar.gz" }
func logsFile(name string) string         { return name + "-logs.gz" }
func resultsFile(name string) string      { return name + "-results.gz" }
func resourceListFile(name string) string { return name + "-resource-list.json.gz" }

// DecodeBackup decodes velero-backup.json, the Backup object Velero stores
// next to each backup. It requires apiVersion velero.io/v1, kind Backup and
// a name, and returns a *DecodeError (ErrMalformed) otherwise.
func DecodeBackup(data []byte) (*velerov1.Backup, error) {
	var b velerov1.Backup
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, &DecodeError{File: metadataFile, Err: err}
	}
	if b.APIVersion != velerov1.SchemeGroupVersion.String() || b.Kind != "Backup" {
		return nil, &DecodeError{File: metadataFile, Err: fmt.Errorf("want apiVersion velero.io/v1 kind Backup, got %q %q", b.APIVersion, b.Kind)}
	}
	if b.Name == "" {
		return nil, &DecodeError{File: metadataFile, Err: errors.New("metadata.name is empty")}
	}
	return &b, nil
}

// ResourceList is the content of <backup>-resource-list.json.gz: for each
// "<group>/<version>/<Kind>" ("v1/ConfigMap" for the core group), the items
// backed up, as "<namespace>/<name>" or, cluster-scoped, "<name>".
type ResourceList map[string][]string

// Items returns the number of items listed.
func (l ResourceList) Items() int {
	n := 0
	for _, items := range l {
		n += len(items)
	}
	return n
}

// DecodeResourceList decodes a (decompressed) resource list and checks
// that every key is a group/version/Kind and every item a non-empty name.
func DecodeResourceList(r io.Reader) (ResourceList, error) {
	list := ResourceList{}
	err := scanResourceList(r, func(gvk, item string) { list[gvk] = append(list[gvk], item) })
	if err != nil {
		return nil, err
	}
	return list, nil
}

// scanResourceList streams a resource list, calling fn for each item, so
// that lists of any size are checked in constant memory.
func scanResourceList(r io.Reader, fn func(gvk, item string)) error {
	const file = "resource list"
	dec := json.NewDecoder(r)
	fail := func(err error) error { return &DecodeError{File: file, Err: err} }
	if err := expectDelim(dec, '{'); err != nil {
		return fail(err)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fail(err)
		}
		gvk, _ := tok.(string)
		if !validGVK(gvk) {
			return fail(fmt.Errorf("key %q is not <group>/<version>/<Kind>", gvk))
		}
		if err := expectDelim(dec, '['); err != nil {
			return fail(fmt.Errorf("%s: %w", gvk, err))
		}
		for dec.More() {
			var item string
			if err := dec.Decode(&item); err != nil {
				return fail(fmt.Errorf("%s: %w", gvk, err))
			}
			if !validItem(item) {
				return fail(fmt.Errorf("%s: item %q is not <namespace>/<name> or <name>", gvk, item))
			}
			fn(gvk, item)
		}
		if err := expectDelim(dec, ']'); err != nil {
			return fail(err)
		}
	}
	if err := expectDelim(dec, '}'); err != nil {
		return fail(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fail(errors.New("trailing data after the object"))
	}
	return nil
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("want %q, got %v", want, tok)
	}
	return nil
}

func validGVK(s string) bool {
	parts := strings.Split(s, "/")
	if len(parts) != 2 && len(parts) != 3 {
		return false
	}
	for _, p := range parts {
		if p == "" || strings.ContainsAny(p, " \t\r\n") {
			return false
		}
	}
	return true
}

func validItem(s string) bool {
	ns, name, found := strings.Cut(s, "/")
	if found && (ns == "" || strings.Contains(name, "/")) {
		return false
	}
	if !found {
		name = ns
	}
	return name != "" && !strings.ContainsAny(s, " \t\r\n")
}

// Results are the errors and warnings of a backup or restore
// (<backup>-results.gz, restore-<restore>-results.gz).
type Results struct {
	Errors   Result `json:"errors"`
	Warnings Result `json:"warnings"`
}

// Result holds messages by scope, as Velero groups them.
type Result struct {
	// Velero holds messages about Velero itself.
	Velero []string `json:"velero,omitempty"`
	// Cluster holds messages about cluster-scoped resources.
	Cluster []string `json:"cluster,omitempty"`
	// Namespaces holds messages per namespace.
	Namespaces map[string][]string `json:"namespaces,omitempty"`
}

// Count returns the number of messages.
func (r Result) Count() int {
	n := len(r.Velero) + len(r.Cluster)
	for _, m := range r.Namespaces {
		n += len(m)
	}
	return n
}

// Messages returns every message, prefixed with its scope
// ("velero: ...", "cluster: ...", "namespace demo: ...").
func (r Result) Messages() []string {
	var out []string
	for _, m := range r.Velero {
		out = append(out, "velero: "+m)
	}
	for _, m := range r.Cluster {
		out = append(out, "cluster: "+m)
	}
	for _, ns := range sortedKeys(r.Namespaces) {
		for _, m := range r.Namespaces[ns] {
			out = append(out, "namespace "+ns+": "+m)
		}
	}
	return out
}

// DecodeResults decodes a (decompressed) results file.
func DecodeResults(r io.Reader) (Results, error) {
	var res Results
	dec := json.NewDecoder(r)
	if err := dec.Decode(&res); err != nil {
		return Results{}, &DecodeError{File: "results", Err: err}
	}
	if _, err := dec.Token(); err != io.EOF {
		return Results{}, &DecodeError{File: "results", Err: errors.New("trailing data after the object")}
	}
	return res, nil
}
