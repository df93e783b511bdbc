package tenant

import (
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRuleTable_declared: every rule is declared once, with an ID whose
// prefix names its decider (as FieldError.Decider reads IDs the table
// does not declare), a description and releases tenantkit mirrors.
func TestRuleTable_declared(t *testing.T) {
	prefixes := map[string]Decider{"S": DecidedByChart, "T": DecidedByChart, "R": DecidedByHelm,
		"H": DecidedByHelm, "A": DecidedByAPI, "K": DecidedByTenantkit}
	seen := map[string]bool{}
	for i, r := range ruleTable {
		require.NotEmpty(t, r.id, "ruleTable[%d] is not declared", i)
		require.False(t, seen[r.id], "%s declared twice", r.id)
		seen[r.id] = true
		prefix, _, _ := strings.Cut(r.id, "-")
		require.Equal(t, prefixes[prefix], r.by, "%s: decider", r.id)
		require.NotEmpty(t, r.does, r.id)
		for _, rel := range r.releases {
			require.True(t, rel != "" && rel.Valid(), "%s: release %q", r.id, rel)
		}
		require.Equal(t, r.by, (&FieldError{Rule: r.id}).Decider(), r.id)
	}
}

// TestRuleTable_tags: the chart struct tags of the model name declared
// rules only (parseChartTag panics on another).
func TestRuleTable_tags(t *testing.T) {
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type)
	walk = func(rt reflect.Type) {
		for rt.Kind() == reflect.Pointer || rt.Kind() == reflect.Slice || rt.Kind() == reflect.Map {
			rt = rt.Elem()
		}
		if rt.Kind() != reflect.Struct || rt.PkgPath() != modelPkg || seen[rt] {
			return
		}
		seen[rt] = true
		for f := range rt.Fields() {
			require.NotPanics(t, func() { parseChartTag(f.Tag.Get("chart")) }, "%s.%s", rt.Name(), f.Name)
			walk(f.Type)
		}
	}
	walk(reflect.TypeFor[KubernetesSpec]())
	require.Greater(t, len(seen), 10, "the walk reached the model's types")
}

// TestRuleTable_documented: the index of testdata/chart/RULES.md is the
// table's (regenerate with TENANTKIT_UPDATE_DOCS=1).
func TestRuleTable_documented(t *testing.T) {
	const path, begin, end = "testdata/chart/RULES.md", "<!-- rules: begin (ruleTable, rules.go) -->\n", "<!-- rules: end -->"
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	doc := string(data)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	require.True(t, i >= 0 && j > i, "the markers of the rule index are missing in %s", path)
	want := ruleTableMarkdown(t)
	if os.Getenv("TENANTKIT_UPDATE_DOCS") != "" {
		require.NoError(t, os.WriteFile(path, []byte(doc[:i+len(begin)]+want+doc[j:]), 0o644))
		return
	}
	require.Equal(t, want, doc[i+len(begin):j], "RULES.md's index of rules differs from ruleTable: run TENANTKIT_UPDATE_DOCS=1 go test -run TestRuleTable_documented ./tenant")
}

// ruleTableMarkdown renders ruleTable as RULES.md's index.
func ruleTableMarkdown(t *testing.T) string {
	names := sentinelNames(t)
	var b strings.Builder
	b.WriteString("| ID | decided by | sentinel | releases | rule |\n| --- | --- | --- | --- | --- |\n")
	for _, r := range ruleTable {
		sentinel, releases := "—", "all"
		if r.err != nil {
			name, ok := names[r.err.Error()]
			require.True(t, ok, "%s: no sentinel declares %q", r.id, r.err)
			sentinel = "`" + name + "`"
		}
		if r.releases != nil {
			rs := make([]string, len(r.releases))
			for i, rel := range r.releases {
				rs[i] = "`" + string(rel) + "`"
			}
			releases = strings.Join(rs, ", ")
		}
		b.WriteString("| " + r.id + " | " + string(r.by) + " | " + sentinel + " | " + releases + " | " + r.does + " |\n")
	}
	return b.String()
}

// sentinelDecl matches a sentinel's declaration: ErrX = errors.New("...").
var sentinelDecl = regexp.MustCompile(`(?m)^\s*(?:var\s+)?(Err\w+)\s*=\s*errors\.New\(("(?:[^"\\]|\\.)*")\)`)

// sentinelNames maps the messages of the sentinels of this package and
// package ref to their names.
func sentinelNames(t *testing.T) map[string]string {
	names := map[string]string{}
	for file, qualifier := range map[string]string{"errors.go": "", "../ref/errors.go": "ref."} {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		for _, m := range sentinelDecl.FindAllStringSubmatch(string(data), -1) {
			msg, err := strconv.Unquote(m[2])
			require.NoError(t, err)
			names[msg] = qualifier + m[1]
		}
	}
	return names
}
