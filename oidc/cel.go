package oidc

import (
	"context"
	"encoding/json"
	"fmt"

	celgo "github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	authenticationcel "k8s.io/apiserver/pkg/authentication/cel"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/lazy"

	"github.com/cozystack/tenantkit/oidc/internal/jose"
)

// The CEL side of the Verifier. Expressions are compiled by the apiserver's
// own compiler (validation.CompileAndValidateJWTAuthenticator); this file
// gives them the same inputs the apiserver does: claims decoded lazily, one
// claim at a time, and __dot__-style escaped names resolved in nested maps.

var (
	claimsType = types.NewObjectType("kubernetes.claims")
	userType   = types.NewObjectType("kubernetes.UserInfo")
)

// claimsValue exposes the claims to CEL as the variable "claims".
func claimsValue(c claims) *lazy.MapValue {
	m := lazy.NewMapValue(claimsType)
	for i, member := range c {
		if !c.last(i) {
			continue
		}
		name, raw := string(member.name), member.value
		m.Append(name, func(*lazy.MapValue) ref.Val {
			v, err := decodeAny(raw)
			if err != nil {
				return types.NewErr("claim %q failed to unmarshal: %v", name, err)
			}
			return celValue(v)
		})
	}
	return m
}

// celClaims is the claims as the mappings' and rules' CEL expressions see
// them, nil when the configuration has none to evaluate.
func (v *Verifier) celClaims(c claims) *lazy.MapValue {
	if !v.usesCEL {
		return nil
	}
	return claimsValue(c)
}

// decodeAny is json.Unmarshal into an any, without reflection for the
// common shapes: a plain string, a list of plain strings, true, false,
// null.
func decodeAny(raw json.RawMessage) (any, error) {
	switch string(raw) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	case "null":
		return nil, nil
	}
	if len(raw) > 0 && raw[0] == '"' {
		if end, plain := jose.ScanString(raw, 0); plain && end == len(raw) {
			return string(raw[1 : len(raw)-1]), nil
		}
	} else if list, ok := plainStringList(raw); ok {
		out := make([]any, len(list))
		for i, s := range list {
			out[i] = s
		}
		return out, nil
	}
	var v any
	err := json.Unmarshal(raw, &v)
	return v, err
}

// userValue exposes a mapped user to CEL as the variable "user".
func userValue(u *UserInfo) *lazy.MapValue {
	m := lazy.NewMapValue(userType)
	field := func(name string, v func() any) {
		m.Append(name, func(*lazy.MapValue) ref.Val { return celValue(v()) })
	}
	field("username", func() any { return u.Username })
	field("uid", func() any { return u.UID })
	field("groups", func() any { return u.Groups })
	field("extra", func() any { return u.Extra })
	return m
}

// celValue converts a decoded JSON (or user) value, wrapping maps and lists
// so that escaped field names work at any depth.
func celValue(v any) ref.Val { return unescaping(types.DefaultTypeAdapter.NativeToValue(v)) }

func unescaping(v ref.Val) ref.Val {
	switch t := v.(type) {
	case traits.Mapper:
		return escapedMap{t}
	case traits.Lister:
		return escapedList{t}
	}
	return v
}

// escapedMap looks up "a__dot__b" as "a.b", as the apiserver does.
type escapedMap struct{ traits.Mapper }

func (m escapedMap) Find(key ref.Val) (ref.Val, bool) {
	if s, ok := key.(types.String); ok {
		if name, ok := apiservercel.Unescape(string(s)); ok && name != string(s) {
			key = types.String(name)
		}
	}
	v, found := m.Mapper.Find(key)
	return unescaping(v), found
}

type escapedList struct{ traits.Lister }

func (l escapedList) Get(i ref.Val) ref.Val { return unescaping(l.Lister.Get(i)) }

// evalString evaluates a mapping that must return a string.
func evalString(ctx context.Context, m authenticationcel.ClaimsMapper, in traits.Mapper, field string) (string, error) {
	res, err := m.EvalClaimMapping(ctx, in)
	if err != nil {
		return "", ruleErr(field, res, err.Error())
	}
	if res.EvalResult.Type() != celgo.StringType {
		return "", ruleErr(field, res, "expression must return a string")
	}
	return res.EvalResult.Value().(string), nil
}

// stringList converts a mapping result to a list of strings: a string, a
// list of strings or null; "" and [] mean none, empty strings are dropped.
func stringList(v ref.Val) ([]string, error) {
	switch v.Type().TypeName() {
	case celgo.StringType.TypeName():
		if s := v.Value().(string); s != "" {
			return []string{s}, nil
		}
		return nil, nil
	case celgo.NullType.TypeName():
		return nil, nil
	case celgo.ListType(nil).TypeName():
	default:
		return nil, fmt.Errorf("expression must return a string or a list of strings")
	}
	var out []string
	add := func(x any) error {
		s, ok := x.(string)
		if !ok {
			return fmt.Errorf("expression must return a string or a list of strings")
		}
		if s != "" {
			out = append(out, s)
		}
		return nil
	}
	switch items := v.Value().(type) {
	case []any:
		for _, x := range items {
			if err := add(x); err != nil {
				return nil, err
			}
		}
	case []ref.Val:
		for _, x := range items {
			if err := add(x.Value()); err != nil {
				return nil, err
			}
		}
	default:
		return nil, fmt.Errorf("expression must return a string or a list of strings")
	}
	return out, nil
}

// checkRules fails on the first rule that is not true.
func checkRules(results []authenticationcel.EvaluationResult, field string) error {
	for _, r := range results {
		if r.EvalResult.Type() != celgo.BoolType {
			return ruleErr(field, r, "validation expression must return a boolean")
		}
		if r.EvalResult.Value().(bool) {
			continue
		}
		msg := ""
		switch a := r.ExpressionAccessor.(type) {
		case *authenticationcel.ClaimValidationCondition:
			msg = a.Message
		case *authenticationcel.UserValidationCondition:
			msg = a.Message
		}
		return ruleErr(field, r, msg)
	}
	return nil
}

func ruleErr(field string, r authenticationcel.EvaluationResult, msg string) *RuleError {
	e := &RuleError{Field: field, Message: msg}
	if r.ExpressionAccessor != nil {
		e.Expression = r.ExpressionAccessor.GetExpression()
	}
	return e
}
