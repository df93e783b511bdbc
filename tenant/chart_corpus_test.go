package tenant_test

import (
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/cozystack/tenantkit/tenant"
)

// The golden corpus of the Cozystack kubernetes chart's decisions: value
// sets with the chart's verdict, derived from testdata/chart/RULES.md (the
// chart's schema, template fail rules, Helm's and cozystack-api's rules).
// TestChartCorpus measures how often tenantkit agrees, and holds the
// disagreements to the list in known-disagreements.txt.
const (
	chartDir       = "testdata/chart"
	chartKnownFile = "known-disagreements.txt"
)

var updateChartKnown = flag.Bool("update-chart-known", false,
	"rewrite testdata/chart/known-disagreements.txt from the current disagreements")

// The verdicts of a case.
const (
	verdictAccept     = "accept"
	verdictReject     = "reject"
	verdictOutOfScope = "out-of-scope"
)

// chartCase is one value set of the corpus.
type chartCase struct {
	Name     string        `json:"name"`
	Expect   string        `json:"expect"`
	Rules    []string      `json:"rules"`
	Warnings []string      `json:"warnings,omitempty"`
	Platform chartPlatform `json:"platform,omitzero"`
	Note     string        `json:"note,omitempty"`
	Values   *string       `json:"values,omitempty"`
	Object   *string       `json:"object,omitempty"`

	file string
}

// chartPlatform is the part of the chart's _cluster values a case sets.
type chartPlatform struct {
	OIDCEnabled bool   `json:"oidcEnabled,omitempty"`
	RootHost    string `json:"rootHost,omitempty"`
}

func (p chartPlatform) platform() tenant.Platform {
	return tenant.Platform{OIDCEnabled: p.OIDCEnabled, RootHost: p.RootHost}
}

// chartRuleID matches the catalogue's rule IDs, such as
// S-nodegroup-required or T-podcpu-limit-negative.
var chartRuleID = regexp.MustCompile(`\b[STHARK]-[a-z0-9]+(?:-[a-z0-9]+)*\b`)

func TestChartCorpus(t *testing.T) {
	rules := loadChartRules(t)
	cases := loadChartCases(t)
	checkChartCases(t, cases, rules)

	var found []string // known-disagreements lines
	var inScope, agree int
	byClass := map[string][2]int{} // class -> {agree, total}
	for _, c := range cases {
		if c.Expect == verdictOutOfScope {
			continue
		}
		inScope++
		got, spec, err := tenantkitVerdict(c)
		class := c.Rules[0][:1]
		n := byClass[class]
		n[1]++
		if got == c.Expect {
			agree++
			n[0]++
		} else {
			found = append(found, c.Name+" "+c.Rules[0])
			t.Logf("disagree %-50s chart %-6s tenantkit %-6s %v", c.Name, c.Expect, got, err)
		}
		byClass[class] = n
		if c.Expect == verdictAccept && got == verdictAccept {
			if err := chartRoundTrip(c, *spec); err != nil {
				found = append(found, "roundtrip/"+c.Name+" S-nodegroup-required")
				t.Logf("roundtrip %-49s %v", c.Name, err)
			}
		}
	}
	t.Logf("agreement %d/%d (%.1f%%) on %d cases (%d out of scope)",
		agree, inScope, 100*float64(agree)/float64(inScope), len(cases), len(cases)-inScope)
	for _, class := range slices.Sorted(maps.Keys(byClass)) {
		n := byClass[class]
		t.Logf("  %s- rules: %d/%d", class, n[0], n[1])
	}
	compareChartKnown(t, found)
}

// tenantkitVerdict parses and validates a case the way a tenantkit user
// does and returns "accept" or "reject", the parsed spec (nil when parsing
// failed) and the error behind a rejection.
func tenantkitVerdict(c chartCase) (string, *tenant.KubernetesSpec, error) {
	p := c.Platform.platform()
	if c.Object != nil {
		k, err := tenant.ParseKubernetes([]byte(*c.Object))
		if err != nil {
			return verdictReject, nil, err
		}
		if err := k.Validate(p); err != nil {
			return verdictReject, &k.Spec, err
		}
		return verdictAccept, &k.Spec, nil
	}
	spec, err := tenant.ParseSpec([]byte(*c.Values))
	if err != nil {
		return verdictReject, nil, err
	}
	if err := spec.Validate(p); err != nil {
		var ve *tenant.ValidationError
		if !errors.As(err, &ve) {
			return verdictReject, &spec, fmt.Errorf("not a *tenant.ValidationError: %w", err)
		}
		return verdictReject, &spec, err
	}
	return verdictAccept, &spec, nil
}

// nodeGroupRequired are the keys the chart's schema requires in every node
// group (RULES.md S-nodegroup-required); Helm applies no schema defaults.
var nodeGroupRequired = []string{"minReplicas", "maxReplicas", "instanceType", "diskSize"}

// chartRoundTrip checks that spec.YAML() of an accepted case is accepted
// again and keeps the schema-required keys of every node group the case
// declares.
func chartRoundTrip(c chartCase, spec tenant.KubernetesSpec) error {
	out, err := spec.YAML()
	if err != nil {
		return err
	}
	again, err := tenant.ParseSpec(out)
	if err != nil {
		return fmt.Errorf("spec.YAML() does not parse again: %w", err)
	}
	if err := again.Validate(c.Platform.platform()); err != nil {
		return fmt.Errorf("spec.YAML() does not validate again: %w", err)
	}
	var doc struct {
		NodeGroups map[string]map[string]any `json:"nodeGroups"`
	}
	if err := yaml.Unmarshal(out, &doc); err != nil {
		return fmt.Errorf("spec.YAML(): %w", err)
	}
	var missing []string
	for _, g := range slices.Sorted(maps.Keys(doc.NodeGroups)) {
		for _, k := range nodeGroupRequired {
			if _, ok := doc.NodeGroups[g][k]; !ok {
				missing = append(missing, "nodeGroups."+g+"."+k)
			}
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("spec.YAML() drops schema-required %s", strings.Join(missing, ", "))
	}
	return nil
}

// compareChartKnown holds the disagreements found to the known list: a new
// disagreement and a listed case that now agrees both fail the test, so the
// list only shrinks as tenantkit learns the chart's rules.
func compareChartKnown(t *testing.T, found []string) {
	t.Helper()
	sort.Strings(found)
	path := filepath.Join(chartDir, chartKnownFile)
	if *updateChartKnown {
		require.NoError(t, os.WriteFile(path, []byte(chartKnownHeader+strings.Join(found, "\n")+"\n"), 0o644))
	}
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	known := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			known[line] = true
		}
	}
	var fresh, fixed []string
	for _, f := range found {
		if !known[f] {
			fresh = append(fresh, f)
		}
		delete(known, f)
	}
	for k := range known {
		fixed = append(fixed, k)
	}
	sort.Strings(fixed)
	t.Logf("%d known disagreements (%s)", len(found), path)
	if len(fresh) > 0 {
		t.Errorf("tenantkit disagrees with the chart on cases not in %s:\n  %s", path, strings.Join(fresh, "\n  "))
	}
	if len(fixed) > 0 {
		t.Errorf("cases now agree with the chart; remove them from %s:\n  %s", path, strings.Join(fixed, "\n  "))
	}
}

const chartKnownHeader = `# Cases of cases/*.yaml on which tenantkit disagrees with the chart today,
# one per line: "<case> <rule ID>" (the verdict differs) or
# "roundtrip/<case> <rule ID>" (spec.YAML() of an accepted case is refused or
# drops a schema-required key). TestChartCorpus fails on a disagreement not
# listed here and on a listed line that now agrees: fixing tenantkit shrinks
# this file to nothing. Regenerate with
#   go test ./tenant -run TestChartCorpus -short -update-chart-known
`

// loadChartRules returns the rule IDs the catalogue defines.
func loadChartRules(t *testing.T) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(chartDir, "RULES.md"))
	require.NoError(t, err)
	rules := map[string]bool{}
	for _, id := range chartRuleID.FindAllString(string(data), -1) {
		rules[id] = true
	}
	require.NotEmpty(t, rules, "no rule IDs in RULES.md")
	return rules
}

// loadChartCases reads every cases/*.yaml, strictly, in file order.
func loadChartCases(t *testing.T) []chartCase {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(chartDir, "cases", "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "no case files")
	var all []chartCase
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		var cases []chartCase
		require.NoError(t, yaml.UnmarshalStrict(data, &cases), f)
		for i := range cases {
			cases[i].file = filepath.Base(f)
		}
		all = append(all, cases...)
	}
	return all
}

// checkChartCases checks the corpus itself: unique names, a verdict, one
// input, rule IDs the catalogue defines (warnings only K- ones), and every
// schema, template, Helm and API rule of the catalogue exercised by a case.
func checkChartCases(t *testing.T, cases []chartCase, rules map[string]bool) {
	t.Helper()
	seen := map[string]bool{}
	used := map[string]bool{}
	for _, c := range cases {
		where := c.file + ": " + c.Name
		require.NotEmpty(t, c.Name, c.file)
		require.False(t, seen[c.Name], "%s: duplicate case name", where)
		seen[c.Name] = true
		require.Contains(t, []string{verdictAccept, verdictReject, verdictOutOfScope}, c.Expect, where)
		require.True(t, (c.Values == nil) != (c.Object == nil), "%s: set exactly one of values and object", where)
		require.NotEmpty(t, c.Rules, "%s: no rule", where)
		for _, id := range c.Rules {
			require.True(t, rules[id], "%s: rule %s is not in RULES.md", where, id)
			used[id] = true
		}
		require.True(t, len(c.Warnings) == 0 || c.Expect == verdictAccept,
			"%s: warnings belong to accepted cases (a rejected one gets an error)", where)
		for _, id := range c.Warnings {
			require.True(t, rules[id] && strings.HasPrefix(id, "K-"), "%s: warning %s is not a K- rule of RULES.md", where, id)
			used[id] = true
		}
	}
	var unused []string
	for id := range rules {
		if strings.IndexByte("STHA", id[0]) >= 0 && !used[id] {
			unused = append(unused, id)
		}
	}
	sort.Strings(unused)
	require.Empty(t, unused, "catalogue rules no case exercises")
}
