package oidc

import (
	"bytes"
	"encoding/json"
	"strings"
)

// A JSON scanner for token payloads and headers. It accepts exactly what
// encoding/json's scanner accepts (fuzzed against json.Valid), so the
// payload is read in one pass: validated, split into its members and the
// claims go-oidc reads picked out, with no value decoded.

// maxJSONDepth is encoding/json's nesting limit; go-jose v2's JSON fork
// (the token header) has none.
const maxJSONDepth = 10000

// validJSON reports whether data is a single JSON value; limit applies
// encoding/json's nesting limit.
func validJSON(data []byte, limit bool) bool {
	maxDepth := -1
	if limit {
		maxDepth = maxJSONDepth
	}
	end := scanJSON(data, skipSpace(data, 0), 0, maxDepth)
	return end >= 0 && skipSpace(data, end) == len(data)
}

// scanJSON validates the value at data[i], nested depth deep already, and
// returns the index after it, or -1. maxDepth < 0 means no limit.
func scanJSON(data []byte, i, depth, maxDepth int) int {
	var stack []byte // the open containers
	for {
		// A value starts at i.
		if i >= len(data) {
			return -1
		}
		switch c := data[i]; {
		case c == '{' || c == '[':
			stack = append(stack, c)
			if maxDepth >= 0 && depth+len(stack) > maxDepth {
				return -1
			}
			i = skipSpace(data, i+1)
			if i < len(data) && data[i] == c+2 { // '}' or ']'
				stack = stack[:len(stack)-1]
				i++
			} else if c == '{' {
				if i = scanKey(data, i); i < 0 {
					return -1
				}
				continue
			} else {
				continue
			}
		case c == '"':
			if i = scanStringStrict(data, i); i < 0 {
				return -1
			}
		case c == '-' || c >= '0' && c <= '9':
			if i = scanNumber(data, i); i < 0 {
				return -1
			}
		case c == 't' || c == 'f' || c == 'n':
			if i = scanLiteral(data, i); i < 0 {
				return -1
			}
		default:
			return -1
		}
		// A value ended at i: close containers until one continues.
		for {
			if len(stack) == 0 {
				return i
			}
			i = skipSpace(data, i)
			if i >= len(data) {
				return -1
			}
			top := stack[len(stack)-1]
			if data[i] == top+2 {
				stack = stack[:len(stack)-1]
				i++
				continue
			}
			if data[i] != ',' {
				return -1
			}
			i = skipSpace(data, i+1)
			if top == '{' {
				if i = scanKey(data, i); i < 0 {
					return -1
				}
			}
			break
		}
	}
}

// scanKey validates `"name" :` at data[i] and returns where the value
// starts.
func scanKey(data []byte, i int) int {
	if i >= len(data) || data[i] != '"' {
		return -1
	}
	if i = scanStringStrict(data, i); i < 0 {
		return -1
	}
	i = skipSpace(data, i)
	if i >= len(data) || data[i] != ':' {
		return -1
	}
	return skipSpace(data, i+1)
}

// scanStringStrict validates the string at data[i] (a quote): no control
// characters, valid escapes. Other bytes, invalid UTF-8 included, pass, as
// in encoding/json.
func scanStringStrict(data []byte, i int) int {
	for j := i + 1; j < len(data); j++ {
		switch c := data[j]; {
		case c == '"':
			return j + 1
		case c < 0x20:
			return -1
		case c == '\\':
			j++
			if j >= len(data) {
				return -1
			}
			switch data[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(data) || !isHex(data[j+1]) || !isHex(data[j+2]) || !isHex(data[j+3]) || !isHex(data[j+4]) {
					return -1
				}
				j += 4
			default:
				return -1
			}
		}
	}
	return -1
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// scanNumber validates -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func scanNumber(data []byte, i int) int {
	if data[i] == '-' {
		i++
	}
	switch {
	case i < len(data) && data[i] == '0':
		i++
	case i < len(data) && data[i] >= '1' && data[i] <= '9':
		for i < len(data) && isDigit(data[i]) {
			i++
		}
	default:
		return -1
	}
	if i < len(data) && data[i] == '.' {
		i++
		if i >= len(data) || !isDigit(data[i]) {
			return -1
		}
		for i < len(data) && isDigit(data[i]) {
			i++
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if i >= len(data) || !isDigit(data[i]) {
			return -1
		}
		for i < len(data) && isDigit(data[i]) {
			i++
		}
	}
	return i
}

func scanLiteral(data []byte, i int) int {
	for _, lit := range [...]string{"true", "false", "null"} {
		if len(data)-i >= len(lit) && string(data[i:i+len(lit)]) == lit {
			return i + len(lit)
		}
	}
	return -1
}

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
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return p, false
	}
	p.claims = make(claims, 16)
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return p, skipSpace(data, i+1) == len(data)
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return p, false
		}
		end := scanStringStrict(data, i)
		if end < 0 {
			return p, false
		}
		_, plain := scanString(data, i)
		key, err := unquote(data[i:end], plain)
		if err != nil {
			return p, false
		}
		i = skipSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return p, false
		}
		start := skipSpace(data, i+1)
		if i = scanJSON(data, start, 1, maxJSONDepth); i < 0 {
			return p, false
		}
		val := json.RawMessage(data[start:i:i])
		p.claims[key] = val
		p.note(key, val)
		i = skipSpace(data, i)
		if i >= len(data) {
			return p, false
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case '}':
			return p, skipSpace(data, i+1) == len(data)
		default:
			return p, false
		}
	}
}

// note records a member that go-oidc reads.
func (p *payloadScan) note(key string, val json.RawMessage) {
	if len(key) > len("_claim_sources")*3 { // no oidcClaims name folds from that long
		return
	}
	for n, name := range oidcClaims {
		if key == name {
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
// names to struct fields ("ISS", and "ıss" with a dotless i, do not equal
// "iss"; "iſs" with a long s does).
func foldEqual(key, name string) bool {
	if len(key) == len(name) && isASCII(key) {
		return strings.EqualFold(key, name)
	}
	return !isASCII(key) && bytes.EqualFold([]byte(key), []byte(name))
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// scanString returns the index after the string starting at data[i] (a
// quote), or -1. plain reports printable ASCII without escapes, whose bytes
// are the decoded string.
func scanString(data []byte, i int) (end int, plain bool) {
	plain = true
	for j := i + 1; j < len(data); j++ {
		switch b := data[j]; {
		case b == '"':
			return j + 1, plain
		case b == '\\':
			plain = false
			j++
		case b < 0x20 || b >= 0x7f:
			plain = false
		}
	}
	return -1, false
}

// skipValue returns the index after the (valid) value starting at
// data[i], or -1. Objects and arrays are skipped by counting brackets.
func skipValue(data []byte, i int) int {
	if i >= len(data) {
		return -1
	}
	switch data[i] {
	case '"':
		end, _ := scanString(data, i)
		return end
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				end, _ := scanString(data, j)
				if end < 0 {
					return -1
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	default:
		j := i
	scan:
		for ; j < len(data); j++ {
			switch data[j] {
			case ',', '}', ']', ' ', '\t', '\r', '\n':
				break scan
			}
		}
		if j == i {
			return -1
		}
		return j
	}
}
