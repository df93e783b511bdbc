package oidc

import (
	"context"
	"encoding/json"

	authenticationcel "k8s.io/apiserver/pkg/authentication/cel"
	"k8s.io/apiserver/pkg/cel/lazy"

	"github.com/cozystack/tenantkit/oidc/internal/jose"
)

// credentialIDKey is the extra key the apiserver sets from a token's jti.
const credentialIDKey = "authentication.kubernetes.io/credential-id"

// mapUser maps verified claims to a user in the apiserver's order: a
// groups claim only available from a distributed claims endpoint refused,
// then username, groups, uid and extra. cv is the claims as CEL sees them
// (celClaims), nil when no expression needs them. groupsClaim is the
// "groups" claim when the mapping read it as a JSON list of strings, for
// the tenant gate (checkClaimRules).
func (v *Verifier) mapUser(ctx context.Context, c claims, cv *lazy.MapValue) (u *UserInfo, groupsClaim []string, err error) {
	if err := c.checkDistributed(v.jwt.ClaimMappings.Groups.Claim); err != nil {
		return nil, nil, err
	}
	u = &UserInfo{}
	if u.Username, err = v.username(ctx, c, cv); err != nil {
		return nil, nil, err
	}
	if u.Groups, groupsClaim, err = v.groups(ctx, c, cv); err != nil {
		return nil, nil, err
	}
	if u.UID, err = v.uid(ctx, c, cv); err != nil {
		return nil, nil, err
	}
	if u.Extra, err = v.extra(ctx, c, cv); err != nil {
		return nil, nil, err
	}
	return u, groupsClaim, nil
}

func (v *Verifier) username(ctx context.Context, c claims, cv *lazy.MapValue) (string, error) {
	if v.mapper.Username != nil {
		name, err := evalString(ctx, v.mapper.Username, cv, "claimMappings.username")
		if err == nil && name == "" {
			err = &RuleError{Field: "claimMappings.username", Expression: v.jwt.ClaimMappings.Username.Expression,
				Message: "empty username"}
		}
		return name, err
	}
	m := v.jwt.ClaimMappings.Username
	var name string
	if err := c.decode(m.Claim, &name, "a string"); err != nil {
		return "", err
	}
	if m.Claim == "email" && c.has("email_verified") {
		var verified bool
		if err := c.decode("email_verified", &verified, "a boolean"); err != nil {
			return "", err
		}
		if !verified {
			return "", ErrEmailNotVerified
		}
	}
	if m.Prefix != nil {
		name = *m.Prefix + name
	}
	return name, nil
}

// groups maps the groups. claimList is the "groups" claim itself when the
// mapping read it and it is a JSON list (for the tenant gate).
func (v *Verifier) groups(ctx context.Context, c claims, cv *lazy.MapValue) (groups, claimList []string, err error) {
	m := v.jwt.ClaimMappings.Groups
	if m.Claim != "" && c.has(m.Claim) {
		var list stringOrList
		if err := c.decode(m.Claim, &list, "a string or a list of strings"); err != nil {
			return nil, nil, err
		}
		if raw, _ := c.get(m.Claim); m.Claim == "groups" && isJSONList(raw) {
			claimList = list
		}
		if m.Prefix != nil && *m.Prefix != "" {
			prefixed := make([]string, len(list))
			for i := range list {
				prefixed[i] = *m.Prefix + list[i]
			}
			return prefixed, claimList, nil
		}
		return list, claimList, nil
	}
	if v.mapper.Groups == nil {
		return nil, nil, nil
	}
	res, err := v.mapper.Groups.EvalClaimMapping(ctx, cv)
	if err != nil {
		return nil, nil, &RuleError{Field: "claimMappings.groups", Expression: m.Expression, Message: err.Error()}
	}
	if groups, err = stringList(res.EvalResult); err != nil {
		return nil, nil, &RuleError{Field: "claimMappings.groups", Expression: m.Expression, Message: err.Error()}
	}
	return groups, nil, nil
}

func isJSONList(raw []byte) bool {
	i := jose.SkipSpace(raw, 0)
	return i < len(raw) && raw[i] == '['
}

func (v *Verifier) uid(ctx context.Context, c claims, cv *lazy.MapValue) (string, error) {
	m := v.jwt.ClaimMappings.UID
	if m.Claim != "" {
		var uid string
		err := c.decode(m.Claim, &uid, "a string")
		return uid, err
	}
	if v.mapper.UID == nil {
		return "", nil
	}
	return evalString(ctx, v.mapper.UID, cv, "claimMappings.uid")
}

func (v *Verifier) extra(ctx context.Context, c claims, cv *lazy.MapValue) (map[string][]string, error) {
	var extra map[string][]string
	if raw, ok := c.get("jti"); ok {
		var jti string
		if err := json.Unmarshal(raw, &jti); err == nil && jti != "" {
			extra = map[string][]string{credentialIDKey: {"JTI=" + jti}}
		}
	}
	if v.mapper.Extra != nil {
		if extra == nil {
			extra = map[string][]string{}
		}
		res, err := v.mapper.Extra.EvalClaimMappings(ctx, cv)
		if err != nil {
			return nil, &RuleError{Field: "claimMappings.extra", Message: err.Error()}
		}
		for _, r := range res {
			vals, err := stringList(r.EvalResult)
			if err != nil {
				return nil, ruleErr("claimMappings.extra", r, err.Error())
			}
			if len(vals) > 0 {
				if m, ok := r.ExpressionAccessor.(*authenticationcel.ExtraMappingExpression); ok {
					extra[m.Key] = vals
				}
			}
		}
	}
	if len(extra) == 0 {
		return nil, nil
	}
	return extra, nil
}
