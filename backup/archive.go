package backup

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"strings"
)

// maxItemBytes bounds one item's JSON: the apiserver refuses request
// bodies over 3 MiB and etcd values over 1.5 MiB by default, so a larger
// entry is not a Kubernetes object.
const maxItemBytes = 32 << 20

// itemPath is a parsed tar entry name under resources/.
type itemPath struct {
	resource        string // <resource>[.<group>]
	group           string
	version         string // from a <version>[-preferredversion] folder
	namespace, name string
	preferred       bool // under a -preferredversion folder
	otherVersion    bool // under another version folder (EnableAPIGroupVersions)
}

// parseItemPath parses resources/<resource>[.<group>]/[<version>/]
// {namespaces/<ns>|cluster}/<name>.json.
func parseItemPath(name string) (itemPath, bool) {
	rest, ok := strings.CutPrefix(name, "resources/")
	if !ok {
		return itemPath{}, false
	}
	parts := strings.Split(rest, "/")
	if len(parts) < 3 || parts[0] == "" {
		return itemPath{}, false
	}
	p := itemPath{resource: parts[0]}
	if _, group, found := strings.Cut(parts[0], "."); found {
		p.group = group
	}
	parts = parts[1:]
	if parts[0] != "namespaces" && parts[0] != "cluster" {
		p.version, p.preferred = strings.CutSuffix(parts[0], "-preferredversion")
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
	p.name = strings.TrimSuffix(file, ".json")
	return p, true
}

// archiveScan reads a Velero tarball entry by entry and checks each one.
type archiveScan struct {
	rep  *VerifyReport
	set  *itemSet
	file string
	cr   *countingReader
	// buf holds the current item's body; prev the one before, whose id
	// a byte-identical preferred-version copy reuses.
	buf, prev []byte
	prevPath  itemPath
	prevID    itemID
	prevOK    bool
	kinds     map[string]string // resource folder -> group/Kind
	folders   map[string]string // group/Kind -> resource folder
	listable  int               // unversioned and other-version copies
	preferred int
	entryEnd  int64 // stream offset where the last entry's data ends
	lastEntry string
	// visit, when set, sees each item's unversioned copy whose identity
	// matches its path (PlanRestore). body is reused after it returns.
	visit func(p itemPath, id *itemID, body []byte)
}

// read reads every entry of the tarball in zr. A non-nil error is the
// stream's (gzip, tar or the download's): the caller decides whether it is
// a problem or a failure to reach the bucket.
func (a *archiveScan) read(zr io.Reader) error {
	a.cr = &countingReader{r: zr}
	a.kinds, a.folders = map[string]string{}, map[string]string{}
	tr := tar.NewReader(a.cr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("tar: after %d items: %w", a.rep.Items, err)
		}
		a.lastEntry = h.Name
		a.entryEnd = a.cr.n + (h.Size+511)&^511
		if err := a.entry(tr, h); err != nil {
			return fmt.Errorf("tar: %s: %w", h.Name, err)
		}
	}
	if end := a.cr.n - a.entryEnd; end != 1024 {
		a.rep.problem(ProblemTruncated, a.file, "the tarball ends after %s without its end-of-archive blocks (%d of 1024 bytes)", a.lastEntry, end)
	}
	// Drain to the gzip trailer so its CRC and length are checked; a
	// tarball ends with zeros only.
	buf := a.buf[:cap(a.buf)]
	if len(buf) < 32<<10 {
		buf = make([]byte, 32<<10)
	}
	for trailing := false; ; {
		n, err := a.cr.Read(buf)
		if !trailing && !allZero(buf[:n]) {
			trailing = true
			a.rep.problem(ProblemTrailingData, a.file, "data after the tarball's end-of-archive blocks")
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	a.rep.ContentBytes = a.cr.n
	return nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// entry checks one tar entry.
func (a *archiveScan) entry(tr *tar.Reader, h *tar.Header) error {
	switch {
	case !fs.ValidPath(h.Name) || strings.Contains(h.Name, `\`):
		a.rep.itemProblem(ProblemUnsafeEntry, a.file, h.Name, "path is not a plain relative path (absolute, or with \"..\", \".\" or empty elements)")
		return nil
	case h.Typeflag == tar.TypeSymlink || h.Typeflag == tar.TypeLink:
		a.rep.itemProblem(ProblemUnsafeEntry, a.file, h.Name, "is a link to %q, not a regular file", h.Linkname)
		return nil
	case h.Typeflag != tar.TypeReg:
		a.rep.itemProblem(ProblemUnsafeEntry, a.file, h.Name, "is not a regular file (tar type %q)", h.Typeflag)
		return nil
	case h.Name == "metadata/version":
		v, err := io.ReadAll(io.LimitReader(tr, 64))
		if err != nil {
			return err
		}
		a.rep.FormatVersion = strings.TrimSpace(string(v))
		return nil
	}
	p, ok := parseItemPath(h.Name)
	if !ok {
		a.rep.Notes = appendCapped(a.rep.Notes, "unexpected archive entry "+h.Name)
		return nil
	}
	if h.Size > maxItemBytes {
		a.rep.itemProblem(ProblemItem, a.file, h.Name, "is %d bytes, larger than any Kubernetes object (%d)", h.Size, maxItemBytes)
		return nil
	}
	if int64(cap(a.buf)) < h.Size {
		a.buf = make([]byte, h.Size, h.Size+h.Size/4)
	}
	body := a.buf[:h.Size]
	if _, err := io.ReadFull(tr, body); err != nil {
		return err
	}
	a.item(h.Name, p, body)
	return nil
}

// item checks one item's body and records it in the set.
func (a *archiveScan) item(entry string, p itemPath, body []byte) {
	var id itemID
	// follows: this is the preferred-version copy of the item just read.
	follows := p.preferred && a.prevOK && !a.prevPath.preferred && a.prevPath.resource == p.resource &&
		a.prevPath.namespace == p.namespace && a.prevPath.name == p.name
	if follows && bytes.Equal(body, a.prev) {
		// Velero writes the same bytes twice, one after the other: the
		// identity found in prev holds (and prev stays as it is).
		id = a.prevID
	} else {
		var err error
		if id, err = scanItem(body); err != nil {
			a.rep.itemProblem(ProblemItem, a.file, entry, "is not a JSON object: %v", err)
			a.prevOK = false
			return
		}
		a.buf, a.prev = a.prev, body // id points into body: keep it
	}
	a.prevPath, a.prevID, a.prevOK = p, id, false
	if msg := matchPath(&id, p); msg != "" {
		a.rep.itemProblem(ProblemItem, a.file, entry, "%s", msg)
		return
	}
	a.prevOK = true
	a.checkKind(entry, p, &id)
	if a.visit != nil && !p.preferred && !p.otherVersion {
		a.visit(p, &id, body)
	}
	switch {
	case p.preferred:
		a.preferred++
	case p.otherVersion:
		a.listable++
	default:
		a.listable++
		a.rep.Items++
	}
	if a.set == nil {
		return
	}
	copyKind := copyUnversioned
	switch {
	case p.preferred:
		copyKind = copyPreferred
	case p.otherVersion:
		copyKind = copyOther
	}
	listed, dup := a.set.found(a.set.hashID(&id), copyKind)
	switch {
	case dup && p.preferred:
		a.rep.itemProblem(ProblemDuplicate, a.file, id.String(), "its preferred-version copy is in the archive more than once (again as %s)", entry)
	case dup:
		a.rep.itemProblem(ProblemDuplicate, a.file, id.String(), "is in the archive more than once (again as %s)", entry)
	case !listed && a.set.listed && !p.preferred:
		a.rep.itemProblem(ProblemUnlisted, a.file, id.String(), "is in the archive (%s) but not in the resource list", entry)
	case !listed && a.set.listed && !follows:
		a.rep.itemProblem(ProblemUnlisted, a.file, id.String(), "has a preferred-version copy in the archive (%s) but is not in the resource list", entry)
	}
}

// matchPath checks the item's identity against its path and returns what
// disagrees, or "".
func matchPath(id *itemID, p itemPath) string {
	if f := id.badField(); f != "" {
		return f + " is not a string"
	}
	group, version, ok := splitAPIVersion(string(id.apiVersion))
	switch {
	case !ok:
		return fmt.Sprintf("apiVersion %q is not [<group>/]<version>", id.apiVersion)
	case len(id.kind) == 0:
		return "kind is empty"
	case len(id.name) == 0:
		return "metadata.name is empty"
	case group != p.group:
		return fmt.Sprintf("apiVersion %s is not in group %q of its folder", id.apiVersion, p.group)
	case p.version != "" && version != p.version:
		return fmt.Sprintf("apiVersion %s is not version %s of its folder", id.apiVersion, p.version)
	case string(id.namespace) != p.namespace || string(id.name) != p.name:
		return fmt.Sprintf("the object is %s, not what its path says", id.String())
	}
	return ""
}

func splitAPIVersion(s string) (group, version string, ok bool) {
	group, version, found := strings.Cut(s, "/")
	if !found {
		group, version = "", s
	}
	return group, version, version != "" && !strings.Contains(version, "/") && (!found || group != "")
}

// String names the item as the resource list does:
// "<apiVersion>/<kind> [<namespace>/]<name>".
func (id *itemID) String() string {
	item := string(id.name)
	if len(id.namespace) > 0 {
		item = string(id.namespace) + "/" + item
	}
	return string(id.apiVersion) + "/" + string(id.kind) + " " + item
}

// maxKinds bounds the resource folders tracked for the kind check.
const maxKinds = 10000

// checkKind checks that each resource folder holds one kind and each kind
// sits in one folder.
func (a *archiveScan) checkKind(entry string, p itemPath, id *itemID) {
	if string(id.kind) == a.kinds[p.resource] {
		return // the common case, without allocating
	}
	kind := string(id.kind)
	if k, ok := a.kinds[p.resource]; ok {
		a.rep.itemProblem(ProblemItem, a.file, entry, "is a %s, but other items under resources/%s are %s", kind, p.resource, k)
		return
	}
	gk := p.group + "/" + kind
	if r, ok := a.folders[gk]; ok {
		a.rep.itemProblem(ProblemItem, a.file, entry, "is a %s under resources/%s, but other %s items are under resources/%s", kind, p.resource, kind, r)
		return
	}
	if len(a.kinds) < maxKinds {
		a.kinds[p.resource] = kind
		a.folders[gk] = p.resource
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
