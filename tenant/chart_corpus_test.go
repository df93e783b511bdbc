package tenant_test

import (
	"errors"
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
// TestChartCorpus requires tenantkit to decide every in-scope case as the
// chart does, for the chart's reason, and to warn exactly of the case's
// tenantkit-only (K-) rules.
const chartDir = "testdata/chart"

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

// typeRules are the rules a decoding error (a value of the wrong JSON
// type) stands for: the decoder reports the type, not the schema rule.
var typeRules = []string{"S-type", "S-quantity"}

func TestChartCorpus(t *testing.T) {
	rules := loadChartRules(t)
	cases := loadChartCases(t)
	checkChartCases(t, cases, rules)

	var inScope, agree, reason, roundTrips int
	byClass := map[string][2]int{} // class of the case's first rule -> {agree, total}
	for _, c := range cases {
		if c.Expect == verdictOutOfScope {
			continue
		}
		inScope++
		got, err := tenantkitDecision(c)
		class := c.Rules[0][:1]
		n := byClass[class]
		n[1]++
		switch {
		case got.verdict != c.Expect:
			t.Errorf("%s (%s): chart %s, tenantkit %s: %v", c.Name, c.file, c.Expect, got.verdict, err)
		default:
			agree++
			n[0]++
			if msg := chartReason(c, got, err); msg != "" {
				t.Errorf("%s (%s): %s", c.Name, c.file, msg)
			} else {
				reason++
			}
		}
		byClass[class] = n
		if c.Expect == verdictAccept && got.verdict == verdictAccept {
			require.NoError(t, chartRoundTrip(c, *got.spec, got.warnings), "%s: spec.YAML()", c.Name)
			roundTrips++
		}
	}
	t.Logf("agreement %d/%d (%.1f%%) on %d cases (%d out of scope); same reason and warnings: %d; round trips: %d",
		agree, inScope, 100*float64(agree)/float64(inScope), len(cases), len(cases)-inScope, reason, roundTrips)
	for _, class := range slices.Sorted(maps.Keys(byClass)) {
		n := byClass[class]
		t.Logf("  %s- rules: %d/%d", class, n[0], n[1])
	}
}

// decision is what tenantkit decides of a case.
type decision struct {
	verdict  string
	spec     *tenant.KubernetesSpec // nil when parsing failed
	warnings tenant.Warnings
}

// tenantkitDecision parses and checks a case the way a tenantkit user
// does: the parser's document checks, then Check.
func tenantkitDecision(c chartCase) (decision, error) {
	p := c.Platform.platform()
	if c.Object != nil {
		k, err := tenant.ParseKubernetes([]byte(*c.Object))
		if err != nil {
			return decision{verdict: verdictReject}, err
		}
		w, err := k.Check(p)
		if err != nil {
			return decision{verdict: verdictReject, spec: &k.Spec}, err
		}
		return decision{verdict: verdictAccept, spec: &k.Spec, warnings: w}, nil
	}
	spec, err := tenant.ParseSpec([]byte(*c.Values))
	if err != nil {
		return decision{verdict: verdictReject}, err
	}
	w, err := spec.Check(p)
	if err != nil {
		return decision{verdict: verdictReject, spec: &spec}, err
	}
	return decision{verdict: verdictAccept, spec: &spec, warnings: w}, nil
}

// chartReason checks that an agreeing decision agrees for the chart's
// reason: a refusal names one of the case's rules (a decoding error stands
// for S-type or S-quantity), an acceptance warns of exactly the case's K-
// rules. It returns what is wrong, or "".
func chartReason(c chartCase, d decision, err error) string {
	if d.verdict == verdictAccept {
		got := slices.Sorted(slices.Values(d.warnings.Rules()))
		want := slices.Sorted(slices.Values(c.Warnings))
		if !slices.Equal(got, want) {
			return fmt.Sprintf("warnings %v, want %v:\n%s", got, want, d.warnings)
		}
		return ""
	}
	var ve *tenant.ValidationError
	if !errors.As(err, &ve) {
		if errors.Is(err, tenant.ErrMalformed) && slices.ContainsFunc(typeRules, func(r string) bool { return slices.Contains(c.Rules, r) }) {
			return ""
		}
		return fmt.Sprintf("refused with %v, not a *tenant.ValidationError naming one of %v", err, c.Rules)
	}
	for _, r := range ve.Rules() {
		if slices.Contains(c.Rules, r) {
			return ""
		}
	}
	return fmt.Sprintf("refused for %v, want one of %v: %v", ve.Rules(), c.Rules, err)
}

// nodeGroupRequired are the keys the chart's schema requires in every node
// group (RULES.md S-nodegroup-required); Helm applies no schema defaults.
var nodeGroupRequired = []string{"minReplicas", "maxReplicas", "instanceType", "diskSize"}

// chartRoundTrip checks that spec.YAML() of an accepted case is accepted
// again, with the same warnings, and keeps the schema-required keys of
// every node group.
func chartRoundTrip(c chartCase, spec tenant.KubernetesSpec, warnings tenant.Warnings) error {
	out, err := spec.YAML()
	if err != nil {
		return err
	}
	again, err := tenant.ParseSpec(out)
	if err != nil {
		return fmt.Errorf("spec.YAML() does not parse again: %w\n%s", err, out)
	}
	w, err := again.Check(c.Platform.platform())
	if err != nil {
		return fmt.Errorf("spec.YAML() is refused: %w\n%s", err, out)
	}
	if !slices.Equal(w.Rules(), warnings.Rules()) {
		return fmt.Errorf("spec.YAML() warns of %v, the case of %v", w.Rules(), warnings.Rules())
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
