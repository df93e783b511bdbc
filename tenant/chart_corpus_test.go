package tenant_test

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/cozystack/tenantkit/ref"
	"github.com/cozystack/tenantkit/tenant"
)

// The golden corpus of the Cozystack kubernetes chart's decisions: value
// sets with the chart's verdict, derived from testdata/chart/RULES.md (the
// chart's schema, template fail rules, Helm's rules) or labelled by
// rendering the chart with Helm (the generated cases), and apart from it
// the verdicts of cozystack-api and of tenantkit's own rules where they
// differ. TestChartCorpus requires tenantkit, for every release a case
// holds for, to decide every in-scope case as the chart does (the chart's
// and Helm's part of its error: ValidationError.By), for the chart's
// reason, to refuse exactly where the case says cozystack-api or a
// deliberate tenantkit rule refuses, and to warn exactly of the case's
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
	Name string `json:"name"`
	// Releases are the Cozystack releases the case holds for; none means
	// every release.
	Releases []tenant.Release `json:"releases,omitempty"`
	// Expect is the chart's (and Helm's) verdict.
	Expect string `json:"expect"`
	// API is cozystack-api's verdict when it refuses what the chart would
	// render ("reject"); empty: not compared.
	API string `json:"api,omitempty"`
	// Tenantkit is "reject" where a deliberate tenantkit rule (a K- rule
	// of the case's rules) refuses what the chart renders.
	Tenantkit string `json:"tenantkit,omitempty"`
	// Oracle is, for a generated case, what Helm v4 said rendering the
	// chart (its error, or "rendered"): the verdict is Helm's; the reason,
	// the warnings and the verdicts apart from the chart's are not
	// compared.
	Oracle   string        `json:"oracle,omitempty"`
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

	// InstanceTypes gives Check Cozystack's default catalogue of instance
	// types (tenant.DefaultInstanceTypes), for the lookup rules.
	InstanceTypes bool `json:"instanceTypes,omitempty"`
}

func (p chartPlatform) platform(r tenant.Release) tenant.Platform {
	out := tenant.Platform{OIDCEnabled: p.OIDCEnabled, RootHost: p.RootHost, Release: r}
	if p.InstanceTypes {
		out.InstanceTypes = tenant.DefaultInstanceTypes()
	}
	return out
}

// releases returns the releases c holds for.
func (c chartCase) releases() []tenant.Release {
	if len(c.Releases) == 0 {
		return tenant.Releases()
	}
	return c.Releases
}

// typeRules are the rules a decoding error (a value of the wrong JSON
// type) stands for: the decoder reports the type, not the schema rule.
var typeRules = []string{"S-type", "S-quantity"}

func TestChartCorpus(t *testing.T) {
	rules := loadChartRules(t)
	cases := loadChartCases(t)
	checkChartCases(t, cases, rules)
	for _, r := range tenant.Releases() {
		t.Run(string(r), func(t *testing.T) { runChartCorpus(t, cases, r) })
	}
}

// runChartCorpus decides every case of release r and reports agreement.
func runChartCorpus(t *testing.T, cases []chartCase, r tenant.Release) {
	var inScope, agree, reason, roundTrips, apiCases, tkCases, objectPaths int
	byClass := map[string][2]int{} // class of the case's first rule -> {agree, total}
	for _, c := range cases {
		if c.Expect == verdictOutOfScope || !slices.Contains(c.releases(), r) {
			continue
		}
		inScope++
		got, err := tenantkitDecision(c, r)
		class := c.Rules[0][:1]
		n := byClass[class]
		n[1]++
		switch {
		case got.chart != c.Expect:
			t.Errorf("%s (%s): chart %s, tenantkit %s: %v", c.Name, c.file, c.Expect, got.chart, err)
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
		if c.API != "" {
			apiCases++
		}
		if c.Tenantkit != "" {
			tkCases++
		}
		if msg := separateVerdicts(c, got, err); msg != "" {
			t.Errorf("%s (%s): %s", c.Name, c.file, msg)
		}
		if c.Values != nil && got.parsed {
			if msg := objectPathAgrees(c, r, got, err); msg != "" {
				t.Errorf("%s (%s): %s", c.Name, c.file, msg)
			} else {
				objectPaths++
			}
		}
		if err == nil && c.Expect == verdictAccept && c.Oracle == "" {
			require.NoError(t, chartRoundTrip(c, r, *got.spec, got.warnings), "%s: spec.YAML()", c.Name)
			roundTrips++
		}
	}
	t.Logf("release %s: agreement %d/%d (%.1f%%) on the chart's verdict (%d out of scope or of other releases); same reason and warnings: %d; round trips: %d; cozystack-api verdicts compared: %d; deliberate tenantkit refusals: %d; object path same as spec path: %d",
		r, agree, inScope, 100*float64(agree)/float64(inScope), len(cases)-inScope, reason, roundTrips, apiCases, tkCases, objectPaths)
	for _, class := range slices.Sorted(maps.Keys(byClass)) {
		n := byClass[class]
		t.Logf("  %s- rules: %d/%d", class, n[0], n[1])
	}
}

// decision is what tenantkit decides of a case.
type decision struct {
	chart    string                 // the chart's and Helm's part of the decision
	api      string                 // cozystack-api's part
	kit      string                 // tenantkit's own rules
	parsed   bool                   // the parser accepted the document (Check ran)
	spec     *tenant.KubernetesSpec // nil when parsing failed
	warnings tenant.Warnings
	chartErr error // the chart's part of the error
}

// tenantkitDecision parses and checks a case the way a tenantkit user
// does: the parser's document checks, then Check on release r. The
// returned error is the whole of tenantkit's.
func tenantkitDecision(c chartCase, r tenant.Release) (decision, error) {
	p := c.Platform.platform(r)
	var (
		spec *tenant.KubernetesSpec
		w    tenant.Warnings
		err  error
	)
	if c.Object != nil {
		k, perr := tenant.ParseKubernetes([]byte(*c.Object))
		if perr != nil {
			return byDecider(decision{}, perr), perr
		}
		spec = &k.Spec
		w, err = k.Check(p)
	} else {
		s, perr := tenant.ParseSpec([]byte(*c.Values))
		if perr != nil {
			return byDecider(decision{}, perr), perr
		}
		spec = &s
		w, err = s.Check(p)
	}
	return byDecider(decision{parsed: true, spec: spec, warnings: w}, err), err
}

// byDecider splits tenantkit's error into the verdicts of the chart (with
// Helm), cozystack-api and tenantkit's own rules: a *ValidationError by
// its problems' deciders, any other error as the chart's refusal (a
// decoding error stands for S-type).
func byDecider(d decision, err error) decision {
	d.chart, d.api, d.kit = verdictAccept, verdictAccept, verdictAccept
	var ve *tenant.ValidationError
	if errors.As(err, &ve) {
		if d.chartErr = ve.By(tenant.DecidedByChart, tenant.DecidedByHelm); d.chartErr != nil {
			d.chart = verdictReject
		}
		if ve.By(tenant.DecidedByAPI) != nil {
			d.api = verdictReject
		}
		if ve.By(tenant.DecidedByTenantkit) != nil {
			d.kit = verdictReject
		}
	} else if err != nil {
		d.chart, d.chartErr = verdictReject, err
	}
	return d
}

// objectPathAgrees checks that the parsed spec of a values case, put into
// an object with NewKubernetes, is checked as the spec alone is: the same
// rules refused, the same warnings. It returns what differs, or "".
func objectPathAgrees(c chartCase, r tenant.Release, d decision, err error) string {
	k := tenant.NewKubernetes(ref.Cluster{Namespace: "tenant-acme", Name: "prod"}, *d.spec)
	w, kerr := k.Check(c.Platform.platform(r))
	if got, want := slices.Sorted(slices.Values(w.Rules())), slices.Sorted(slices.Values(d.warnings.Rules())); !slices.Equal(got, want) {
		return fmt.Sprintf("NewKubernetes(c, spec).Check warns of %v, spec.Check of %v", got, want)
	}
	if got, want := errorRules(kerr), errorRules(err); !slices.Equal(got, want) {
		return fmt.Sprintf("NewKubernetes(c, spec).Check refuses for %v, spec.Check for %v", got, want)
	}
	return ""
}

// errorRules returns the sorted rules of a *tenant.ValidationError, or the
// error's text.
func errorRules(err error) []string {
	var ve *tenant.ValidationError
	if errors.As(err, &ve) {
		return slices.Sorted(slices.Values(ve.Rules()))
	}
	if err != nil {
		return []string{err.Error()}
	}
	return nil
}

// chartReason checks that an agreeing decision agrees for the chart's
// reason: a refusal names one of the case's rules (a decoding error stands
// for S-type or S-quantity), an acceptance warns of exactly the case's K-
// rules. It returns what is wrong, or "".
func chartReason(c chartCase, d decision, err error) string {
	if c.Oracle != "" {
		return ""
	}
	if d.chart == verdictAccept {
		if err != nil {
			return "" // refused by cozystack-api or tenantkit: separateVerdicts
		}
		got := slices.Sorted(slices.Values(d.warnings.Rules()))
		want := slices.Sorted(slices.Values(c.Warnings))
		if !slices.Equal(got, want) {
			return fmt.Sprintf("warnings %v, want %v:\n%s", got, want, d.warnings)
		}
		return ""
	}
	var ve *tenant.ValidationError
	if !errors.As(d.chartErr, &ve) {
		if errors.Is(d.chartErr, tenant.ErrMalformed) && slices.ContainsFunc(typeRules, func(r string) bool { return slices.Contains(c.Rules, r) }) {
			return ""
		}
		return fmt.Sprintf("refused with %v, not a *tenant.ValidationError naming one of %v", d.chartErr, c.Rules)
	}
	for _, r := range ve.Rules() {
		if slices.Contains(c.Rules, r) {
			return ""
		}
	}
	return fmt.Sprintf("refused for %v, want one of %v: %v", ve.Rules(), c.Rules, err)
}

// separateVerdicts checks the verdicts apart from the chart's: where the
// case says cozystack-api refuses, tenantkit refuses for one of the case's
// A- rules; where it says a tenantkit rule refuses, for one of its K-
// rules, and nowhere else.
func separateVerdicts(c chartCase, d decision, err error) string {
	if c.Oracle != "" {
		return ""
	}
	if c.API != "" && d.api != c.API {
		return fmt.Sprintf("cozystack-api %s, tenantkit's API part %s: %v", c.API, d.api, err)
	}
	want := orAccept(c.Tenantkit)
	if d.kit != want {
		return fmt.Sprintf("tenantkit's own rules: want %s, got %s: %v", want, d.kit, err)
	}
	var ve *tenant.ValidationError
	if errors.As(err, &ve) {
		for _, fe := range ve.Errors {
			if d := fe.Decider(); (d == tenant.DecidedByAPI || d == tenant.DecidedByTenantkit) && !slices.Contains(c.Rules, fe.Rule) {
				return fmt.Sprintf("refused by %s for %s, not one of the case's rules %v", d, fe.Rule, c.Rules)
			}
		}
	}
	return ""
}

func orAccept(v string) string {
	if v == "" {
		return verdictAccept
	}
	return v
}

// nodeGroupRequired are the keys the chart's schema requires in every node
// group (RULES.md S-nodegroup-required); Helm applies no schema defaults.
var nodeGroupRequired = []string{"minReplicas", "maxReplicas", "instanceType", "diskSize"}

// chartRoundTrip checks that spec.YAML() of an accepted case is accepted
// again, with the same warnings, and keeps the schema-required keys of
// every node group.
func chartRoundTrip(c chartCase, r tenant.Release, spec tenant.KubernetesSpec, warnings tenant.Warnings) error {
	out, err := spec.YAML()
	if err != nil {
		return err
	}
	again, err := tenant.ParseSpec(out)
	if err != nil {
		return fmt.Errorf("spec.YAML() does not parse again: %w\n%s", err, out)
	}
	w, err := again.Check(c.Platform.platform(r))
	if err != nil {
		return fmt.Errorf("spec.YAML() is refused: %w\n%s", err, out)
	}
	// A key set twice is written once.
	notDuplicate := func(r string) bool { return r != "K-duplicate-key" }
	if !slices.Equal(slices.Collect(filter(w.Rules(), notDuplicate)), slices.Collect(filter(warnings.Rules(), notDuplicate))) {
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

// loadChartRules returns the rules tenant's table declares (the index of
// RULES.md is rendered from it), by ID.
func loadChartRules(t *testing.T) map[string]tenant.ChartRule {
	t.Helper()
	rules := map[string]tenant.ChartRule{}
	for _, r := range tenant.ChartRules() {
		rules[r.ID] = r
	}
	require.NotEmpty(t, rules, "no rules declared")
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
// input, rule IDs the table declares (warnings only K- ones), cases of a
// rule of some releases holding for those only, and every rule of the
// table exercised by a case.
func checkChartCases(t *testing.T, cases []chartCase, rules map[string]tenant.ChartRule) {
	t.Helper()
	seen := map[string]bool{}
	used := map[string]bool{}
	for _, c := range cases {
		where := c.file + ": " + c.Name
		require.NotEmpty(t, c.Name, c.file)
		require.False(t, seen[c.Name], "%s: duplicate case name", where)
		seen[c.Name] = true
		require.Contains(t, []string{verdictAccept, verdictReject, verdictOutOfScope}, c.Expect, where)
		require.Contains(t, []string{"", verdictReject}, c.API, "%s: api is reject or absent", where)
		require.Contains(t, []string{"", verdictReject}, c.Tenantkit, "%s: tenantkit is reject or absent", where)
		for _, r := range c.Releases {
			require.True(t, r.Valid() && r != "", "%s: release %q is not one of tenant.Releases", where, r)
		}
		if c.Tenantkit != "" {
			require.True(t, slices.ContainsFunc(c.Rules, func(r string) bool { return strings.HasPrefix(r, "K-") }), "%s: a tenantkit refusal names its K- rule", where)
		}
		require.True(t, (c.Values == nil) != (c.Object == nil), "%s: set exactly one of values and object", where)
		require.NotEmpty(t, c.Rules, "%s: no rule", where)
		for _, id := range c.Rules {
			rule, ok := rules[id]
			require.True(t, ok, "%s: rule %s is not declared (tenant/rules.go)", where, id)
			for _, r := range c.releases() {
				require.True(t, rule.Releases == nil || slices.Contains(rule.Releases, r), "%s: rule %s does not hold for release %s", where, id, r)
			}
			used[id] = true
		}
		require.True(t, len(c.Warnings) == 0 || c.Expect == verdictAccept && c.API == "" && c.Tenantkit == "",
			"%s: warnings belong to accepted cases (a rejected one gets an error)", where)
		for _, id := range c.Warnings {
			rule, ok := rules[id]
			require.True(t, ok && strings.HasPrefix(id, "K-") && rule.By == tenant.DecidedByTenantkit, "%s: warning %s is not a K- rule of the table", where, id)
			used[id] = true
		}
	}
	var unused []string
	for _, r := range tenant.ChartRules() {
		if !used[r.ID] {
			unused = append(unused, r.ID)
		}
	}
	require.Empty(t, unused, "declared rules no case exercises")
}

// filter yields the elements of s that keep accepts.
func filter[T any](s []T, keep func(T) bool) func(func(T) bool) {
	return func(yield func(T) bool) {
		for _, v := range s {
			if keep(v) && !yield(v) {
				return
			}
		}
	}
}
