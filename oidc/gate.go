package oidc

import (
	"encoding/json"
	"strings"

	"k8s.io/apiserver/pkg/apis/apiserver"
)

// groupsGate is the tenant groups rule (Cluster.TenantGroupsGate) evaluated
// natively. The rule is still compiled and validated by the apiserver's CEL
// compiler in NewVerifier; this only skips the interpreter on the hot path
// for the exact expression shape this package renders. TestGroupsGateMatchesCEL
// checks that both agree on every claim shape.
type groupsGate struct {
	rule    apiserver.ClaimValidationRule
	allowed map[string]bool
}

const (
	gatePrefix = `has(claims.groups) && dyn(claims.groups).exists(g, g in [`
	gateSuffix = `])`
)

// parseGroupsGate recognises a rule of the form TenantGroupsGate renders
// with plain group names (lowercase letters, digits, '-', '.', '_').
func parseGroupsGate(r apiserver.ClaimValidationRule) (*groupsGate, bool) {
	inner, ok := strings.CutPrefix(r.Expression, gatePrefix)
	if !ok {
		return nil, false
	}
	if inner, ok = strings.CutSuffix(inner, gateSuffix); !ok || inner == "" {
		return nil, false
	}
	g := &groupsGate{rule: r, allowed: map[string]bool{}}
	for _, item := range strings.Split(inner, ",") {
		name, ok := strings.CutPrefix(strings.TrimPrefix(item, " "), `"`)
		if ok {
			name, ok = strings.CutSuffix(name, `"`)
		}
		if !ok || !plainName(name) {
			return nil, false
		}
		g.allowed[name] = true
	}
	return g, true
}

func plainName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_') {
			return false
		}
	}
	return true
}

// check applies the rule with CEL's semantics: exists() over a list is
// true when an element is one of the names (other elements compare
// unequal); over a map it ranges over the keys; over anything else, and
// without the claim, the rule fails. list is the groups claim when the
// mapping already decoded it as a list of strings.
func (g *groupsGate) check(c claims, list []string) error {
	for _, s := range list {
		if g.allowed[s] {
			return nil
		}
	}
	raw, ok := c.get("groups")
	if ok && list == nil {
		var v any
		if json.Unmarshal(raw, &v) == nil {
			switch t := v.(type) {
			case []any:
				for _, e := range t {
					if s, ok := e.(string); ok && g.allowed[s] {
						return nil
					}
				}
			case map[string]any:
				for k := range t {
					if g.allowed[k] {
						return nil
					}
				}
			}
		}
	}
	return &RuleError{Field: "claimValidationRules", Expression: g.rule.Expression, Message: g.rule.Message}
}
