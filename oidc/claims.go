package oidc

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cozystack/tenantkit/oidc/internal/jose"
)

// claims are a token's payload members in order, each value left
// undecoded until a mapping asks for it (as the apiserver does). Lookups
// use exact names and find the last of duplicates, as decoding into the
// apiserver's map[string]json.RawMessage keeps it.
type claims []claim

type claim struct {
	name  []byte // the member name, unquoted
	value json.RawMessage
}

// get returns the value of the last member named name.
func (c claims) get(name string) (json.RawMessage, bool) {
	for i := len(c) - 1; i >= 0; i-- {
		if string(c[i].name) == name {
			return c[i].value, true
		}
	}
	return nil, false
}

// last reports whether c[i] is the last member of its name (the one that
// counts).
func (c claims) last(i int) bool {
	for _, m := range c[i+1:] {
		if string(m.name) == string(c[i].name) {
			return false
		}
	}
	return true
}

// googleIssuer is the legacy issuer OIDC Core 15.6.2 lets Google use; the
// apiserver and go-oidc accept it for https://accounts.google.com.
const googleIssuer = "accounts.google.com"

// untrustedIssuer reads iss the way the apiserver routes a token, before
// any verification: encoding/json into a struct (so "ISS" counts), a
// string or null.
func untrustedIssuer(p *payloadScan, payload []byte) (string, error) {
	var iss string
	if p.folded {
		var f struct {
			Issuer string `json:"iss"`
		}
		if err := json.Unmarshal(payload, &f); err != nil {
			return "", &MalformedTokenError{Reason: "iss is not a string"}
		}
		iss = f.Issuer
	} else if raw := p.known[0]; raw != nil {
		if err := decodeString(raw, &iss); err != nil {
			return "", &MalformedTokenError{Reason: "iss is not a string"}
		}
	}
	if iss == googleIssuer {
		return "https://" + googleIssuer, nil
	}
	return iss, nil
}

// oidcFields are the claims go-oidc v2 decodes into its idToken after the
// signature check, with its types: a failure to decode any of them fails
// the token.
type oidcFields struct {
	Issuer       string                 `json:"iss"`
	Subject      string                 `json:"sub"`
	Audience     audience               `json:"aud"`
	Expiry       numericDate            `json:"exp"`
	IssuedAt     numericDate            `json:"iat"`
	NotBefore    *numericDate           `json:"nbf"`
	Nonce        string                 `json:"nonce"`
	AtHash       string                 `json:"at_hash"`
	ClaimNames   map[string]string      `json:"_claim_names"`
	ClaimSources map[string]claimSource `json:"_claim_sources"`
}

type claimSource struct {
	Endpoint    string `json:"endpoint"`
	AccessToken string `json:"access_token"`
}

// decodeOIDCFields decodes the go-oidc claims: member by member when each
// appears once under its exact name, else the whole payload with
// encoding/json (whose case-insensitive, last-wins matching then decides).
func decodeOIDCFields(p *payloadScan, payload []byte) (*oidcFields, error) {
	f := &oidcFields{}
	if p.folded {
		if err := json.Unmarshal(payload, f); err != nil {
			return nil, &MalformedTokenError{Reason: "claims: " + jsonProblem(err)}
		}
		return f, nil
	}
	targets := [len(oidcClaims)]any{&f.Issuer, &f.Subject, &f.Audience, &f.Expiry, &f.IssuedAt, &f.NotBefore,
		&f.Nonce, &f.AtHash, &f.ClaimNames, &f.ClaimSources}
	for n, raw := range p.known {
		if raw == nil {
			continue
		}
		var err error
		switch dst := targets[n].(type) {
		case *string:
			err = decodeString(raw, dst)
		case *numericDate:
			err = dst.UnmarshalJSON(raw)
		case *audience:
			err = dst.UnmarshalJSON(raw)
		default:
			err = json.Unmarshal(raw, dst)
		}
		if err != nil {
			return nil, &MalformedTokenError{Reason: oidcClaims[n] + ": " + jsonProblem(err)}
		}
	}
	return f, nil
}

// checkClaimSources is go-oidc v2's check of distributed claims: every
// name in _claim_names needs a source present in _claim_sources.
func (f *oidcFields) checkClaimSources() error {
	for name, src := range f.ClaimNames {
		if src == "" {
			return &ClaimError{Claim: "_claim_names", Problem: fmt.Sprintf("%q has no source", name)}
		}
		if _, ok := f.ClaimSources[src]; !ok {
			return &ClaimError{Claim: "_claim_sources", Problem: fmt.Sprintf("source %q missing", src)}
		}
	}
	return nil
}

// decodeString is json.Unmarshal into a string: plain literals directly,
// null leaves dst alone.
func decodeString(raw []byte, dst *string) error {
	if len(raw) >= 2 && raw[0] == '"' {
		if end, plain := jose.ScanString(raw, 0); plain && end == len(raw) {
			*dst = string(raw[1 : len(raw)-1])
			return nil
		}
	}
	return json.Unmarshal(raw, dst)
}

// audience is go-oidc's aud: a string (null reads as "") or a list.
type audience []string

func (a *audience) UnmarshalJSON(b []byte) error {
	var s string
	if decodeString(b, &s) == nil {
		*a = audience{s}
		return nil
	}
	var auds []string
	if err := json.Unmarshal(b, &auds); err != nil {
		return err
	}
	*a = auds
	return nil
}

// numericDate is go-oidc's jsonTime: a JSON number, or a string holding
// one, truncated to seconds. null is an error (so is a missing exp, later:
// it reads as the zero time).
type numericDate time.Time

func (d *numericDate) UnmarshalJSON(b []byte) error {
	var n json.Number
	if len(b) > 0 && b[0] >= '0' && b[0] <= '9' && isInteger(b) {
		n = json.Number(b)
	} else if err := json.Unmarshal(b, &n); err != nil {
		return err
	}
	unix, err := n.Int64()
	if err != nil {
		f, ferr := n.Float64()
		if ferr != nil {
			return ferr
		}
		unix = int64(f)
	}
	*d = numericDate(time.Unix(unix, 0))
	return nil
}

func isInteger(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// decodeClaim unmarshals a claim for a mapping; a missing claim is a
// *ClaimError.
func (c claims) decode(name string, v any, want string) error {
	raw, ok := c.get(name)
	if !ok {
		return &ClaimError{Claim: name, Problem: "missing"}
	}
	// raw is a valid JSON value (the payload passed the scanner), so an
	// Unmarshaler can take it directly, as json.Unmarshal would pass it on.
	var err error
	switch dst := v.(type) {
	case *string:
		err = decodeString(raw, dst)
	case *bool:
		switch string(raw) {
		case "true":
			*dst = true
		case "false":
			*dst = false
		default:
			err = json.Unmarshal(raw, v)
		}
	case json.Unmarshaler:
		err = dst.UnmarshalJSON(raw)
	default:
		err = json.Unmarshal(raw, v)
	}
	if err != nil {
		return &ClaimError{Claim: name, Problem: "not " + want}
	}
	return nil
}

// has reports whether the claim is present (null counts as present).
func (c claims) has(name string) bool {
	_, ok := c.get(name)
	return ok
}

// stringOrList is a claim that may be a string or a list of strings.
type stringOrList []string

func (s *stringOrList) UnmarshalJSON(b []byte) error {
	if list, ok := plainStringList(b); ok {
		*s = list
		return nil
	}
	var list []string
	if err := json.Unmarshal(b, &list); err == nil {
		*s = list
		return nil
	}
	var one string
	if err := json.Unmarshal(b, &one); err != nil {
		return err
	}
	*s = []string{one}
	return nil
}

// plainStringList decodes a compact list of plain strings (["a","b"]),
// the common groups claim, without encoding/json.
func plainStringList(b []byte) ([]string, bool) {
	if len(b) < 2 || b[0] != '[' || b[len(b)-1] != ']' {
		return nil, false
	}
	if len(b) == 2 {
		return []string{}, true
	}
	out := make([]string, 0, 4)
	for i := 1; ; {
		if b[i] != '"' {
			return nil, false
		}
		end, plain := jose.ScanString(b, i)
		if !plain || end < 0 {
			return nil, false
		}
		out = append(out, string(b[i+1:end-1]))
		switch {
		case end == len(b)-1:
			return out, true
		case b[end] == ',':
			i = end + 1
		default:
			return nil, false
		}
	}
}

// checkDistributed refuses a groups claim that is only available from a
// distributed claims endpoint, after the same structural checks the
// apiserver's resolver makes.
func (c claims) checkDistributed(groupsClaim string) error {
	if groupsClaim == "" || c.has(groupsClaim) || !c.has("_claim_names") {
		return nil
	}
	var names map[string]string
	if err := c.decode("_claim_names", &names, "a map of strings"); err != nil {
		return err
	}
	if !c.has("_claim_sources") {
		return &ClaimError{Claim: "_claim_sources", Problem: "missing while _claim_names is set"}
	}
	var sources map[string]struct {
		Endpoint string `json:"endpoint"`
	}
	if err := c.decode("_claim_sources", &sources, "a map of claim sources"); err != nil {
		return err
	}
	src, ok := names[groupsClaim]
	if !ok {
		return nil
	}
	ep, ok := sources[src]
	if !ok {
		return &ClaimError{Claim: "_claim_sources", Problem: fmt.Sprintf("source %q missing", src)}
	}
	if ep.Endpoint == "" {
		return nil // aggregated claim: ignored, as the apiserver does
	}
	return fmt.Errorf("%w: %q from %s", ErrDistributedClaims, groupsClaim, ep.Endpoint)
}

// payloadProblem says why a payload is not a JSON object.
func payloadProblem(payload []byte) string {
	var m map[string]json.RawMessage
	err := json.Unmarshal(payload, &m)
	switch {
	case err != nil:
		return "payload is not a JSON object: " + jsonProblem(err)
	case m == nil:
		return "payload is null"
	}
	return "payload is not a JSON object"
}

// jsonProblem shortens a JSON error without echoing token content.
func jsonProblem(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var num *strconv.NumError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("syntax error at offset %d", syn.Offset)
	case errors.As(err, &typ):
		return "want " + typ.Type.String() + ", got " + typ.Value
	case errors.As(err, &num):
		return "not a number"
	case strings.Contains(err.Error(), "exceeded max depth"):
		return "nested too deeply"
	default:
		return "invalid JSON"
	}
}
