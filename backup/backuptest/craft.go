package backuptest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"

	"github.com/cozystack/tenantkit/backup"
)

// Entry is one file of a backup tarball, for crafting damaged archives.
type Entry struct {
	// Header is the tar header (Name, Typeflag, Linkname, Mode...). Its
	// Size is set from Body when the archive is written.
	Header tar.Header
	// Body is the file's content.
	Body []byte
}

// Archive is a backup tarball's files, in order, with its resource list.
type Archive struct {
	Entries []Entry
	List    backup.ResourceList
}

// NewArchive returns the spec's archive and resource list as values to
// edit (a small backup: the whole archive is held in memory).
func (s Spec) NewArchive() (*Archive, error) {
	var buf bytes.Buffer
	list, err := s.writeArchive(&buf)
	if err != nil {
		return nil, err
	}
	entries, err := readEntries(buf.Bytes())
	if err != nil {
		return nil, err
	}
	return &Archive{Entries: entries, List: list}, nil
}

// readEntries decompresses a .tar.gz and returns its entries.
func readEntries(targz []byte) ([]Entry, error) {
	zr, err := gzip.NewReader(bytes.NewReader(targz))
	if err != nil {
		return nil, fmt.Errorf("backuptest: %w", err)
	}
	tr := tar.NewReader(zr)
	var out []Entry
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("backuptest: %w", err)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("backuptest: %w", err)
		}
		out = append(out, Entry{Header: *h, Body: body})
	}
}

// Index returns the position of the entry named name, or -1.
func (a *Archive) Index(name string) int {
	for i, e := range a.Entries {
		if e.Header.Name == name {
			return i
		}
	}
	return -1
}

// Remove drops the entries named names.
func (a *Archive) Remove(names ...string) {
	drop := map[string]bool{}
	for _, n := range names {
		drop[n] = true
	}
	out := a.Entries[:0]
	for _, e := range a.Entries {
		if !drop[e.Header.Name] {
			out = append(out, e)
		}
	}
	a.Entries = out
}

// Tar returns the uncompressed tarball. With end false, the two zero
// blocks that end a tar archive are left out (a tar cut at an entry
// boundary).
func (a *Archive) Tar(end bool) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range a.Entries {
		h := e.Header
		if h.Typeflag == tar.TypeReg || h.Typeflag == 0 {
			h.Size = int64(len(e.Body))
		}
		if err := tw.WriteHeader(&h); err != nil {
			return nil, fmt.Errorf("backuptest: %w", err)
		}
		if _, err := tw.Write(e.Body); err != nil {
			return nil, fmt.Errorf("backuptest: %w", err)
		}
	}
	if err := tw.Flush(); err != nil {
		return nil, fmt.Errorf("backuptest: %w", err)
	}
	if end {
		if err := tw.Close(); err != nil {
			return nil, fmt.Errorf("backuptest: %w", err)
		}
	}
	return buf.Bytes(), nil
}

// TarGz returns the archive as Velero stores it: the tarball, gzipped.
func (a *Archive) TarGz() ([]byte, error) {
	t, err := a.Tar(true)
	if err != nil {
		return nil, err
	}
	return gzipBytes(t), nil
}

// ListGz returns the gzipped resource list.
func (a *Archive) ListGz() ([]byte, error) {
	data, err := json.Marshal(a.List)
	if err != nil {
		return nil, fmt.Errorf("backuptest: %w", err)
	}
	return gzipBytes(data), nil
}

// GzipBytes compresses data as one gzip member.
func GzipBytes(data []byte) []byte { return gzipBytes(data) }
