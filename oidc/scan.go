package oidc

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cozystack/tenantkit/oidc/internal/jose"
)

// The payload reader: one pass over the payload validates it (with
// jose.ScanValue, which accepts what encoding/json accepts), splits it into
// its members and picks out the claims go-oidc reads, decoding no value.

// oidcClaims are the payload members go-oidc v2 decodes into its idToken
// (with encoding/json, so case-insensitively) and the apiserver into its
// untrusted issuer.
var oidcClaims = [...]string{"iss", "sub", "aud", "exp", "iat", "nbf", "nonce", "at_hash", "_claim_names", "_claim_sources"}

// payloadScan is a payload read by scanPayload.
type payloadScan struct {
	claims claims
	// known are the members named exactly like oidcClaims, by index.
	known [len(oidcClaims)]json.RawMessage
	// folded is set when a member name matches one of oidcClaims only
	// case-insensitively, or one appears twice: encoding/json's struct
	// decoding then has to be followed to the letter (decodeOIDCClaims).
	folded bool
}

// scanPayload validates a payload and splits it into its members. ok is
// false when it is not valid JSON or not an object.
func scanPayload(data []byte) (p payloadScan, ok bool) {
	i := jose.SkipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return p, false
	}
	p.claims = make(claims, 0, 12)
	i = jose.SkipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return p, jose.SkipSpace(data, i+1) == len(data)
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return p, false
		}
		end, plain := jose.ScanString(data, i)
		if end < 0 {
			return p, false
		}
		key := data[i+1 : end-1 : end-1]
		if !plain {
			s, err := jose.Unquote(data[i:end], false)
			if err != nil {
				return p, false
			}
			key = []byte(s)
		}
		i = jose.SkipSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return p, false
		}
		start := jose.SkipSpace(data, i+1)
		if i = jose.ScanValue(data, start, 1, jose.MaxDepth); i < 0 {
			return p, false
		}
		val := json.RawMessage(data[start:i:i])
		p.claims = append(p.claims, claim{name: key, value: val})
		p.note(key, val)
		i = jose.SkipSpace(data, i)
		if i >= len(data) {
			return p, false
		}
		switch data[i] {
		case ',':
			i = jose.SkipSpace(data, i+1)
		case '}':
			return p, jose.SkipSpace(data, i+1) == len(data)
		default:
			return p, false
		}
	}
}

// splitToken decodes the payload of a compact JWS the way the apiserver
// reads the untrusted issuer: exactly three parts, unpadded base64url
// (line breaks ignored), a JSON object. A token in the JSON serialization
// is refused first, as the apiserver refuses it.
func splitToken(token string) ([]byte, *payloadScan, error) {
	if strings.HasPrefix(strings.TrimSpace(token), "{") {
		return nil, nil, &MalformedTokenError{Reason: "JSON serialization; want compact JWS"}
	}
	_, rest, ok1 := strings.Cut(token, ".")
	p, sig, ok2 := strings.Cut(rest, ".")
	if !ok1 || !ok2 || strings.Contains(sig, ".") {
		return nil, nil, &MalformedTokenError{Reason: fmt.Sprintf("%d parts; want 3", strings.Count(token, ".")+1)}
	}
	payload, err := base64.RawURLEncoding.DecodeString(p)
	if err != nil {
		return nil, nil, &MalformedTokenError{Reason: "payload is not base64url"}
	}
	scan, ok := scanPayload(payload)
	if !ok {
		return nil, nil, &MalformedTokenError{Reason: payloadProblem(payload)}
	}
	return payload, &scan, nil
}

// note records a member that go-oidc reads.
func (p *payloadScan) note(key []byte, val json.RawMessage) {
	if len(key) > len("_claim_sources")*3 { // no oidcClaims name folds from that long
		return
	}
	for n, name := range oidcClaims {
		if string(key) == name {
			if p.known[n] != nil {
				p.folded = true
			}
			p.known[n] = val
			return
		}
	}
	for _, name := range oidcClaims {
		if foldEqual(key, name) {
			p.folded = true
			return
		}
	}
}

// foldEqual is bytes.EqualFold, which encoding/json uses to match member
// names to struct fields ("ISS" and "iſs" with a long s equal "iss"; "ıss"
// with a dotless i does not).
func foldEqual(key []byte, name string) bool {
	if isASCII(key) {
		return len(key) == len(name) && strings.EqualFold(string(key), name)
	}
	return bytes.EqualFold(key, []byte(name))
}

func isASCII(s []byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
