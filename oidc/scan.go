package oidc

import (
	"encoding/json"
	"strings"
)

// splitClaims splits a JSON object into its members without decoding the
// values: the result equals what encoding/json decodes into
// map[string]json.RawMessage (exact keys, last duplicate wins). It also
// returns the last members whose keys match "iss" and "nbf" the way
// encoding/json matches struct fields (case-insensitively, bytes.EqualFold),
// which is how the apiserver and go-oidc read those two.
//
// It is a fast path for well-formed objects: ok is false for anything it
// does not handle, and the caller falls back to encoding/json. It does not
// validate every literal; a token is only accepted after go-oidc has decoded
// the same payload with encoding/json, which does.
func splitClaims(data []byte) (c claims, iss, nbf json.RawMessage, ok bool) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, nil, nil, false
	}
	c = make(claims, 16)
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return c, nil, nil, skipSpace(data, i+1) == len(data)
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return nil, nil, nil, false
		}
		end, plain := scanString(data, i)
		if end < 0 {
			return nil, nil, nil, false
		}
		var key string
		if plain {
			key = string(data[i+1 : end-1])
		} else if json.Unmarshal(data[i:end], &key) != nil {
			return nil, nil, nil, false
		}
		i = skipSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return nil, nil, nil, false
		}
		start := skipSpace(data, i+1)
		if i = skipValue(data, start); i < 0 {
			return nil, nil, nil, false
		}
		val := json.RawMessage(data[start:i:i])
		c[key] = val
		switch {
		case strings.EqualFold(key, "iss"):
			iss = val
		case strings.EqualFold(key, "nbf"):
			nbf = val
		}
		i = skipSpace(data, i)
		if i >= len(data) {
			return nil, nil, nil, false
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case '}':
			return c, iss, nbf, skipSpace(data, i+1) == len(data)
		default:
			return nil, nil, nil, false
		}
	}
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

// skipValue returns the index after the value starting at data[i], or -1.
// Objects and arrays are skipped by counting brackets, without recursion.
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
