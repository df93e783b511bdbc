package tenant

// ChartRule is a rule of ruleTable as the chart corpus test
// (package tenant_test) sees it.
type ChartRule struct {
	ID       string
	By       Decider
	Releases []Release // nil: every release
}

// ChartRules returns the rules of ruleTable, in its order.
func ChartRules() []ChartRule {
	out := make([]ChartRule, len(ruleTable))
	for i, r := range ruleTable {
		out[i] = ChartRule{ID: r.id, By: r.by, Releases: r.releases}
	}
	return out
}
