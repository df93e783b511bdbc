package oidc

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// claims are a token's payload, each value left undecoded until a mapping
// asks for it (as the apiserver does).
type claims map[string]json.RawMessage

// parsedToken is a compact JWS split and its payload decoded, before any
// verification. Nothing in it may be trusted until the signature checks.
type parsedToken struct {
	rawHeader string
	payload   []byte
	claims    claims
	issuer    string
	nbf       json.RawMessage // matched case-insensitively, as go-oidc does
}

// parseUnverified splits a compact JWS and decodes its payload the way the
// apiserver reads the untrusted issuer: exactly three parts, strict
// unpadded base64url, a JSON object whose iss (if any) is a string. Like
// encoding/json decoding into a struct, "ISS" counts as iss.
func parseUnverified(raw string) (*parsedToken, error) {
	if strings.HasPrefix(strings.TrimSpace(raw), "{") {
		return nil, &MalformedTokenError{Reason: "JSON serialization; want compact JWS"}
	}
	h, rest, ok1 := strings.Cut(raw, ".")
	p, sig, ok2 := strings.Cut(rest, ".")
	if !ok1 || !ok2 || strings.Contains(sig, ".") {
		return nil, &MalformedTokenError{Reason: fmt.Sprintf("%d parts; want 3", strings.Count(raw, ".")+1)}
	}
	payload, err := base64.RawURLEncoding.DecodeString(p)
	if err != nil {
		return nil, &MalformedTokenError{Reason: "payload is not base64url"}
	}
	t := &parsedToken{rawHeader: h, payload: payload}
	var iss json.RawMessage
	var ok bool
	if t.claims, iss, t.nbf, ok = splitClaims(payload); !ok {
		if iss, t.nbf, err = decodeClaims(payload, &t.claims); err != nil {
			return nil, err
		}
	}
	if iss != nil {
		if err := json.Unmarshal(iss, &t.issuer); err != nil {
			return nil, &MalformedTokenError{Reason: "iss is not a string"}
		}
	}
	// OIDC Core 15.6.2: Google's legacy issuer, accepted by the apiserver.
	if t.issuer == "accounts.google.com" {
		t.issuer = "https://accounts.google.com"
	}
	return t, nil
}

// decodeClaims is splitClaims done by encoding/json, with its errors.
func decodeClaims(payload []byte, c *claims) (iss, nbf json.RawMessage, err error) {
	if err := json.Unmarshal(payload, c); err != nil {
		return nil, nil, &MalformedTokenError{Reason: "payload is not a JSON object: " + jsonProblem(err)}
	}
	if *c == nil {
		return nil, nil, &MalformedTokenError{Reason: "payload is null"}
	}
	var fields struct {
		Iss json.RawMessage `json:"iss"`
		Nbf json.RawMessage `json:"nbf"`
	}
	if err := json.Unmarshal(payload, &fields); err != nil {
		return nil, nil, &MalformedTokenError{Reason: "payload: " + jsonProblem(err)}
	}
	return fields.Iss, fields.Nbf, nil
}

// header decodes the JOSE header (only needed to explain a rejection).
func (t *parsedToken) header() (alg string, ok bool) {
	data, err := base64.RawURLEncoding.DecodeString(t.rawHeader)
	if err != nil {
		return "", false
	}
	var hdr struct {
		Alg string `json:"alg"`
	}
	_ = json.Unmarshal(data, &hdr)
	return hdr.Alg, true
}

// has reports whether the claim is present (null counts as present).
func (c claims) has(name string) bool {
	_, ok := c[name]
	return ok
}

// decode unmarshals a claim; a missing claim is a *ClaimError.
func (c claims) decode(name string, v any, want string) error {
	raw, ok := c[name]
	if !ok {
		return &ClaimError{Claim: name, Problem: "missing"}
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return &ClaimError{Claim: name, Problem: "not " + want}
	}
	return nil
}

// numericDate decodes a NumericDate as go-oidc does: an integer, or a float
// truncated to seconds; null and absent mean none.
func numericDate(name string, raw json.RawMessage) (t time.Time, ok bool, err error) {
	if raw == nil || string(raw) == "null" {
		return time.Time{}, false, nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		return time.Time{}, true, &MalformedTokenError{Reason: name + " is not a number"}
	}
	if i, err := n.Int64(); err == nil {
		return time.Unix(i, 0), true, nil
	}
	f, err := n.Float64()
	if err != nil {
		return time.Time{}, true, &MalformedTokenError{Reason: name + " is not a number"}
	}
	return time.Unix(int64(f), 0), true, nil
}

// stringOrList is a claim that may be a string or a list of strings.
type stringOrList []string

func (s *stringOrList) UnmarshalJSON(b []byte) error {
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

// jsonProblem shortens a JSON error without echoing token content.
func jsonProblem(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("syntax error at offset %d", syn.Offset)
	case errors.As(err, &typ):
		return "want an object, got " + typ.Value
	case strings.Contains(err.Error(), "exceeded max depth"):
		return "nested too deeply"
	default:
		return "invalid JSON"
	}
}
