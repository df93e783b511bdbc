package backup

import (
	"archive/tar"
	"context"
	"fmt"
	"io"
	"strings"
)

// counts tallies items per API group and namespace.
type counts map[string]int

func (c counts) add(group, namespace string) { c[group+"\x00"+namespace]++ }

func describeCountKey(k string) string {
	group, ns, _ := strings.Cut(k, "\x00")
	if group == "" {
		group = "core"
	}
	if ns == "" {
		return "group " + group + ", cluster-scoped"
	}
	return "group " + group + ", namespace " + ns
}

// archiveCounts is what reading the tarball found.
type archiveCounts struct {
	items     counts // unversioned copies
	preferred counts // <version>-preferredversion copies
}

// itemPath is a parsed tar entry name under resources/.
type itemPath struct {
	group, namespace string
	preferred        bool // under a -preferredversion folder
	otherVersion     bool // under another version folder (EnableAPIGroupVersions)
}

// parseItemPath parses resources/<resource>[.<group>]/[<version>/]
// {namespaces/<ns>|cluster}/<name>.json.
func parseItemPath(name string) (itemPath, bool) {
	rest, ok := strings.CutPrefix(name, "resources/")
	if !ok {
		return itemPath{}, false
	}
	parts := strings.Split(rest, "/")
	if len(parts) < 3 {
		return itemPath{}, false
	}
	var p itemPath
	if _, group, found := strings.Cut(parts[0], "."); found {
		p.group = group
	}
	parts = parts[1:]
	if parts[0] != "namespaces" && parts[0] != "cluster" {
		p.preferred = strings.HasSuffix(parts[0], "-preferredversion")
		p.otherVersion = !p.preferred
		parts = parts[1:]
	}
	switch {
	case len(parts) == 3 && parts[0] == "namespaces" && parts[1] != "":
		p.namespace = parts[1]
	case len(parts) == 2 && parts[0] == "cluster":
	default:
		return itemPath{}, false
	}
	file := parts[len(parts)-1]
	if !strings.HasSuffix(file, ".json") || file == ".json" {
		return itemPath{}, false
	}
	return p, true
}

// verifyArchive streams <name>.tar.gz through gzip and tar.
func (s *Store) verifyArchive(ctx context.Context, name string, size int64, rep *VerifyReport, opts VerifyOptions) (counts, error) {
	file := archiveFile(name)
	r, err := s.open(ctx, s.backupKey(name, file))
	if err != nil {
		if transient(ctx, err) {
			return nil, fmt.Errorf("verify %s: %w", name, err)
		}
		rep.problem(file, "%v", unwrapDecode(err))
		return nil, nil
	}
	defer r.Close()
	var src io.Reader = r
	if opts.Progress != nil {
		src = &progressReader{r: r, total: size, fn: opts.Progress}
	}
	zr, err := newGzipReader(src, file)
	if err != nil {
		if transient(ctx, err) {
			return nil, fmt.Errorf("verify %s: %w", name, err)
		}
		rep.problem(file, "%v", unwrapDecode(err))
		return nil, nil
	}
	found, err := readArchive(zr, rep)
	if err != nil {
		if transient(ctx, err) {
			return nil, fmt.Errorf("verify %s: %w", name, err)
		}
		rep.problem(file, "%v", err)
		return nil, nil
	}
	if rep.FormatVersion == "" {
		rep.problem(file, "metadata/version is missing")
	}
	for k, n := range found.items {
		if found.preferred[k] != n && len(found.preferred) > 0 {
			rep.problem(file, "%s: %d items but %d preferred-version copies", describeCountKey(k), n, found.preferred[k])
		}
	}
	return found.items, nil
}

// readArchive reads every entry of a Velero tarball, checking paths,
// metadata/version and that each item looks like a JSON object.
func readArchive(zr io.Reader, rep *VerifyReport) (archiveCounts, error) {
	found := archiveCounts{items: counts{}, preferred: counts{}}
	cr := &countingReader{r: zr}
	tr := tar.NewReader(cr)
	buf := make([]byte, 32<<10)
	var bad int
	var firstBad string
	defer func() {
		if bad > 0 {
			rep.problem(firstBad, "is not a JSON object (%d such items)", bad)
		}
	}()
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return found, fmt.Errorf("tar: after %d items: %w", rep.Items, err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		if h.Name == "metadata/version" {
			v, err := io.ReadAll(io.LimitReader(tr, 64))
			if err != nil {
				return found, fmt.Errorf("tar: metadata/version: %w", err)
			}
			rep.FormatVersion = strings.TrimSpace(string(v))
			continue
		}
		p, ok := parseItemPath(h.Name)
		if !ok {
			rep.Notes = appendCapped(rep.Notes, "unexpected archive entry "+h.Name)
			continue
		}
		first, last, err := scanEnds(tr, buf)
		if err != nil {
			return found, fmt.Errorf("tar: %s: %w", h.Name, err)
		}
		if first != '{' || last != '}' {
			if bad++; bad == 1 {
				firstBad = h.Name
			}
		}
		switch {
		case p.preferred:
			found.preferred.add(p.group, p.namespace)
		case !p.otherVersion:
			found.items.add(p.group, p.namespace)
			rep.Items++
		}
	}
	// Drain to the gzip trailer so its CRC and length are checked.
	if _, err := io.CopyBuffer(io.Discard, cr, buf); err != nil {
		return found, err
	}
	rep.ContentBytes = cr.n
	return found, nil
}

// scanEnds reads r to the end and returns its first and last non-space
// bytes. It looks only at the ends of each chunk, so it costs little more
// than the copy.
func scanEnds(r io.Reader, buf []byte) (first, last byte, err error) {
	for {
		n, err := r.Read(buf)
		chunk := buf[:n]
		if first == 0 {
			for _, c := range chunk {
				if !isSpace(c) {
					first = c
					break
				}
			}
		}
		for k := len(chunk) - 1; k >= 0; k-- {
			if !isSpace(chunk[k]) {
				last = chunk[k]
				break
			}
		}
		if err == io.EOF {
			return first, last, nil
		}
		if err != nil {
			return first, last, err
		}
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\r' || c == '\t' }

// compareCounts compares the resource list with the archive.
func compareCounts(rep *VerifyReport, listed, archived counts) {
	if archived == nil {
		return
	}
	keys := map[string]bool{}
	for k := range listed {
		keys[k] = true
	}
	for k := range archived {
		keys[k] = true
	}
	for _, k := range sortedKeys(keys) {
		if listed[k] != archived[k] {
			rep.problem("", "%s: resource list has %d items, archive has %d", describeCountKey(k), listed[k], archived[k])
		}
	}
}

const maxNotes = 20

func appendCapped(notes []string, n string) []string {
	if len(notes) == maxNotes {
		return append(notes, "... more notes left out")
	}
	if len(notes) > maxNotes {
		return notes
	}
	return append(notes, n)
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// progressReader reports progress at most every 4 MiB.
type progressReader struct {
	r           io.Reader
	total, done int64
	last        int64
	fn          func(done, total int64)
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.done += int64(n)
	if p.done-p.last >= 4<<20 || err == io.EOF {
		p.last = p.done
		p.fn(p.done, p.total)
	}
	return n, err
}
