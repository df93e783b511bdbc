package apisurface

import (
	"bufio"
	"bytes"
	"fmt"
	"slices"
	"strings"
)

// Marks of a line of the surface file: what changed since the last
// release.
const (
	markSame    = ' '
	markAdded   = '+'
	markRemoved = '-'
)

// header opens the surface file.
const header = `# tenantkit's exported API: one identifier a line (package, name, kind), read by
# internal/apisurface from the public packages' non-test files. A line marked + was added and
# a line marked - removed since the last release (before the first: since this file was
# written); CHANGELOG.md's Unreleased section names each.
# Regenerate: TENANTKIT_UPDATE_DOCS=1 go test ./internal/apisurface
# After cutting a release: TENANTKIT_UPDATE_DOCS=release go test ./internal/apisurface
`

// Golden is the content of the surface file: the identifiers of the last
// release (Released) and the current ones (Current), both sorted.
type Golden struct {
	Released []Ident
	Current  []Ident
}

// Changed returns the identifiers added or removed since the release, in
// the file's order, with the mark of each.
func (g Golden) Changed() (ids []Ident, marks []byte) {
	for _, l := range g.lines() {
		if l.mark != markSame {
			ids, marks = append(ids, l.id), append(marks, l.mark)
		}
	}
	return ids, marks
}

// Format returns the surface file.
func (g Golden) Format() []byte {
	var b bytes.Buffer
	b.WriteString(header)
	for _, l := range g.lines() {
		fmt.Fprintf(&b, "%c %s %s %s\n", l.mark, l.id.Pkg, l.id.Name, l.id.Kind)
	}
	return b.Bytes()
}

// line is one identifier of the file with its mark.
type line struct {
	mark byte
	id   Ident
}

// lines merges Released and Current into the file's lines.
func (g Golden) lines() []line {
	var out []line
	i, j := 0, 0
	for i < len(g.Released) || j < len(g.Current) {
		switch {
		case j == len(g.Current) || i < len(g.Released) && compare(g.Released[i], g.Current[j]) < 0:
			out = append(out, line{markRemoved, g.Released[i]})
			i++
		case i == len(g.Released) || compare(g.Released[i], g.Current[j]) > 0:
			out = append(out, line{markAdded, g.Current[j]})
			j++
		default:
			out = append(out, line{markSame, g.Current[j]})
			i, j = i+1, j+1
		}
	}
	return out
}

// ParseGolden reads a surface file that Format wrote.
func ParseGolden(data []byte) (Golden, error) {
	var g Golden
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		text := sc.Text()
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		fields := strings.Fields(text[1:])
		if len(fields) != 3 {
			return Golden{}, fmt.Errorf("surface file, line %d: want MARK PACKAGE NAME KIND, got %q", n, text)
		}
		id := Ident{Pkg: fields[0], Name: fields[1], Kind: fields[2]}
		switch text[0] {
		case markSame:
			g.Released, g.Current = append(g.Released, id), append(g.Current, id)
		case markAdded:
			g.Current = append(g.Current, id)
		case markRemoved:
			g.Released = append(g.Released, id)
		default:
			return Golden{}, fmt.Errorf("surface file, line %d: unknown mark %q", n, text[0])
		}
	}
	if !slices.IsSortedFunc(g.Released, compare) || !slices.IsSortedFunc(g.Current, compare) {
		return Golden{}, fmt.Errorf("surface file: lines not sorted by package, name, kind")
	}
	return g, sc.Err()
}
