package apisurface

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const (
	root          = "../.."
	surfacePath   = root + "/docs/api/surface.txt"
	changelogPath = root + "/CHANGELOG.md"
)

// TestSurface: docs/api/surface.txt is the public packages' exported API,
// and CHANGELOG.md's Unreleased section names every identifier added or
// removed since the last release. TENANTKIT_UPDATE_DOCS=1 rewrites the
// file (the release's identifiers kept); TENANTKIT_UPDATE_DOCS=release
// makes the current API the release's.
func TestSurface(t *testing.T) {
	current, err := Scan(root)
	require.NoError(t, err)
	data, err := os.ReadFile(surfacePath)
	require.NoError(t, err)
	golden, err := ParseGolden(data)
	require.NoError(t, err)
	switch os.Getenv("TENANTKIT_UPDATE_DOCS") {
	case "":
	case "release":
		golden = Golden{Released: current, Current: current}
		require.NoError(t, os.WriteFile(surfacePath, golden.Format(), 0o644))
	default:
		golden.Current = current
		require.NoError(t, os.WriteFile(surfacePath, golden.Format(), 0o644))
	}
	require.Equal(t, format(current), format(golden.Current),
		"the exported API differs from docs/api/surface.txt: run TENANTKIT_UPDATE_DOCS=1 go test ./internal/apisurface, then name each + and - line in CHANGELOG.md's Unreleased section")
	changelog, err := os.ReadFile(changelogPath)
	require.NoError(t, err)
	unreleased := Unreleased(string(changelog))
	var unnamed []string
	ids, marks := golden.Changed()
	for i, id := range ids {
		if !Named(unreleased, id) {
			unnamed = append(unnamed, fmt.Sprintf("%c %s %s %s", marks[i], id.Pkg, id.Name, id.Kind))
		}
	}
	require.Empty(t, unnamed, "added (+) or removed (-) since the last release, and not named in CHANGELOG.md's Unreleased section (an entry naming the package, the name in `code`)")
}

// format renders identifiers one a line, for a readable diff.
func format(ids []Ident) string {
	var b strings.Builder
	for _, id := range ids {
		fmt.Fprintf(&b, "%s %s %s\n", id.Pkg, id.Name, id.Kind)
	}
	return b.String()
}

// TestScan: what counts as an identifier of the surface.
func TestScan(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, src string) {
		p := filepath.Join(dir, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(src), 0o644))
	}
	write("go.mod", "module example.com/m\n")
	write("a/a.go", `package a

const C, c = 1, 2
var V int
type T struct { F, f int; Embedded; *Ptr; x.Sel }
type I interface { M(); m() }
type L[P any] struct{ G P }
type u struct { H int }
func F() {}
func (T) M() {}
func (*L[P]) N() {}
func (u) Exported() {}
`)
	write("a/a_other.go", "package a\n\nvar V int\n") // a second build's copy: listed once
	write("a/a_test.go", "package a\n\nfunc TestOnly() {}\n")
	write("a/ign.go", "//go:build ignore\n\npackage a\n\nfunc Ignored() {}\n")
	write("root.go", "package m\n\nfunc Root() {}\n")
	write("internal/i/i.go", "package i\n\nfunc Internal() {}\n\ntype Shared struct{ X, y int }\n")
	// Aliases: of a module type, its members under the alias's name; of
	// a type outside the module, the name only.
	write("a/alias.go", "package a\n\nimport (\n\t\"example.com/m/internal/i\"\n\tt \"time\"\n)\n\ntype S = i.Shared\ntype D = t.Duration\ntype s = i.Shared\n")
	write("examples/e/e.go", "package main\n\nfunc Example() {}\n")
	write("cmd/main.go", "package main\n\nfunc Main() {}\n")
	write("nested/go.mod", "module example.com/nested\n")
	write("nested/n.go", "package nested\n\nfunc Nested() {}\n")
	ids, err := Scan(dir)
	require.NoError(t, err)
	require.Equal(t, `a C const
a D type
a F func
a I type
a I.M method
a L type
a L.G field
a L.N method
a S type
a S.X field
a T type
a T.Embedded field
a T.F field
a T.M method
a T.Ptr field
a T.Sel field
a V var
tenantkit Root func
`, format(ids))
}

// TestGolden: the surface file's marks round-trip.
func TestGolden(t *testing.T) {
	id := func(name string) Ident { return Ident{Pkg: "p", Name: name, Kind: KindFunc} }
	g := Golden{Released: []Ident{id("A"), id("B")}, Current: []Ident{id("B"), id("C")}}
	data := g.Format()
	require.True(t, strings.HasSuffix(string(data), "- p A func\n  p B func\n+ p C func\n"), string(data))
	back, err := ParseGolden(data)
	require.NoError(t, err)
	require.Equal(t, g, back)
	ids, marks := back.Changed()
	require.Equal(t, []Ident{id("A"), id("C")}, ids)
	require.Equal(t, "-+", string(marks))

	for _, bad := range []string{"* p A func\n", "  p A\n", "  p B func\n  p A func\n"} {
		_, err := ParseGolden([]byte(bad))
		require.Error(t, err, bad)
	}
}

// TestNamed: which changelog entries name an identifier.
func TestNamed(t *testing.T) {
	changelog := "# Changelog\n\n## Unreleased\n\n### gpushare: defaults\n\n" +
		"- Added `gpushare.DefaultCores` and\n  `DefaultPolicy`.\n" +
		"- Added `KindConfig` (`Workers`) and `Env.Start`.\n\n" +
		"### API\n\n- `gpushare/live`: `Informer`.\n- backup: `Restore`\n\n" +
		"## v0.1.0\n\n### oidc\n\n- `Old`\n"
	unreleased := Unreleased(changelog)
	for _, tc := range []struct {
		id    Ident
		named bool
	}{
		{Ident{Pkg: "gpushare", Name: "DefaultCores"}, true},
		{Ident{Pkg: "gpushare", Name: "DefaultPolicy"}, true},      // a continuation line
		{Ident{Pkg: "gpushare", Name: "KindConfig.Workers"}, true}, // the heading names the package
		{Ident{Pkg: "gpushare", Name: "Env.Start"}, true},          // Type.Member
		{Ident{Pkg: "gpushare/live", Name: "Informer"}, true},      // the last path element
		{Ident{Pkg: "backup", Name: "Restore"}, true},              // the bullet names the package
		{Ident{Pkg: "gpushare", Name: "Default"}, false},           // a word, not a prefix
		{Ident{Pkg: "gpushare", Name: "Restore"}, false},           // another package's entry
		{Ident{Pkg: "oidc", Name: "Old"}, false},                   // a release's section
		{Ident{Pkg: "gpushare", Name: "defaults"}, false},          // not in a code span
	} {
		require.Equal(t, tc.named, Named(unreleased, tc.id), "%+v", tc.id)
	}
}
