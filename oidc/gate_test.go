package oidc

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/cozystack/tenantkit/ref"
	"github.com/stretchr/testify/require"
	"k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/apis/apiserver/validation"
)

// TestGroupsGateMatchesCEL evaluates the tenant gate with the apiserver's
// compiled CEL program and with the native fast path, on every shape a
// groups claim can take, and requires the same verdict.
func TestGroupsGateMatchesCEL(t *testing.T) {
	c := ref.Cluster{Namespace: "tenant-acme", Name: "prod"}
	jwt := JWTAuthenticator(c, "https://idp.example.org", nil)
	mapper, errs := validation.CompileAndValidateJWTAuthenticator(celCompiler(), jwt, nil)
	require.Empty(t, errs)
	gate, ok := parseGroupsGate(jwt.ClaimValidationRules[0])
	require.True(t, ok, "the rendered gate is recognised")

	shapes := []string{
		``, `null`, `"tenant-acme-admin"`, `"other"`, `[]`, `["tenant-acme-admin"]`, `["x","tenant-acme-view"]`,
		`["tenant-acme-adminx"]`, `["TENANT-ACME-ADMIN"]`, `[1,"tenant-acme-use"]`, `[1,2]`, `[null]`, `[["tenant-acme-admin"]]`,
		`{"tenant-acme-admin":true}`, `{"x":"tenant-acme-admin"}`, `{}`, `true`, `3`, `["tenant-acme-super-admin",{}]`,
		`[{"tenant-acme-admin":1}]`, `["tenant-b-admin","tenant-acme-view "]`,
	}
	for _, shape := range shapes {
		t.Run(shape, func(t *testing.T) {
			cl := claims{}
			if shape != "" {
				cl = append(cl, claim{name: []byte("groups"), value: json.RawMessage(shape)})
			}
			res, err := mapper.ClaimValidationRules.EvalClaimMappings(context.Background(), claimsValue(cl))
			celAccepts := err == nil && checkRules(res, "claimValidationRules") == nil

			var list stringOrList
			var claimList []string
			if raw, ok := cl.get("groups"); ok && json.Unmarshal(raw, &list) == nil && isJSONList(raw) {
				claimList = list
			}
			require.Equal(t, celAccepts, gate.check(cl, claimList) == nil)
		})
	}
}

func TestParseGroupsGateRefusesOtherExpressions(t *testing.T) {
	c := ref.Cluster{Namespace: "tenant-acme", Name: "prod"}
	for _, expr := range []string{
		`has(claims.groups)`,
		TenantGroupsGate(c) + ` && true`,
		`has(claims.groups) && dyn(claims.groups).exists(g, g in ["a\"b"])`,
		`has(claims.groups) && dyn(claims.groups).exists(g, g in [])`,
		`has(claims.groups) && dyn(claims.groups).exists(g, g in ["A"])`,
	} {
		rules := tenantGates([]apiserver.ClaimValidationRule{{Expression: expr}})
		require.Nil(t, rules, expr)
	}
}
