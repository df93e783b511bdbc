package jose

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
)

// JSON scanning. Valid and ScanValue accept exactly what encoding/json's
// scanner accepts (fuzzed against json.Valid); the fork helpers read JSON
// as go-jose v2 decodes it (its fork of Go 1.6's encoding/json): object
// members match struct fields case-sensitively and a duplicate member name
// in any object it decodes is an error. The fork helpers only walk input
// that has passed a syntax check.

// MaxDepth is encoding/json's nesting limit; go-jose v2's JSON fork
// (the token header) has none.
const MaxDepth = 10000

// Valid reports whether data is a single JSON value; limit applies
// encoding/json's nesting limit.
func Valid(data []byte, limit bool) bool {
	maxDepth := -1
	if limit {
		maxDepth = MaxDepth
	}
	end := ScanValue(data, SkipSpace(data, 0), 0, maxDepth)
	return end >= 0 && SkipSpace(data, end) == len(data)
}

// ScanValue validates the value at data[i], nested depth deep already, and
// returns the index after it, or -1. maxDepth < 0 means no limit.
func ScanValue(data []byte, i, depth, maxDepth int) int {
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
			i = SkipSpace(data, i+1)
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
			if i, _ = ScanString(data, i); i < 0 {
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
			i = SkipSpace(data, i)
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
			i = SkipSpace(data, i+1)
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
	if i, _ = ScanString(data, i); i < 0 {
		return -1
	}
	i = SkipSpace(data, i)
	if i >= len(data) || data[i] != ':' {
		return -1
	}
	return SkipSpace(data, i+1)
}

// ScanString validates the string literal at data[i] (a quote) and
// returns the index after it, or -1: no control characters, valid escapes;
// other bytes, invalid UTF-8 included, pass, as in encoding/json. plain
// reports printable ASCII without escapes, whose bytes are the string.
func ScanString(data []byte, i int) (end int, plain bool) {
	plain = true
	for j := i + 1; j < len(data); j++ {
		switch c := data[j]; {
		case c == '"':
			return j + 1, plain
		case c < 0x20:
			return -1, false
		case c >= 0x7f:
			plain = false
		case c == '\\':
			plain = false
			j++
			if j >= len(data) {
				return -1, false
			}
			switch data[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(data) || !isHex(data[j+1]) || !isHex(data[j+2]) || !isHex(data[j+3]) || !isHex(data[j+4]) {
					return -1, false
				}
				j += 4
			default:
				return -1, false
			}
		}
	}
	return -1, false
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

func SkipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the index after the (valid) value starting at
// data[i], or -1. Objects and arrays are skipped by counting brackets.
func skipValue(data []byte, i int) int {
	if i >= len(data) {
		return -1
	}
	switch data[i] {
	case '"':
		end, _ := ScanString(data, i)
		return end
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				end, _ := ScanString(data, j)
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

// JSON as go-jose v2 decodes it (its fork of Go 1.6's encoding/json):
// object members match struct fields case-sensitively, and a duplicate
// member name in any object it decodes is an error. The input has already
// passed a syntax check; these helpers only walk it.

var errDuplicateMember = errors.New("duplicate member")

// forkObject calls fn for each member of the object raw, in order, with
// the member name unquoted, after refusing duplicate names. A value that
// is not an object is an error.
func forkObject(raw []byte, fn func(name string, value []byte) error) error {
	i := SkipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return errors.New("not an object")
	}
	var seenBuf [16]string // names so far: objects here are small
	seen := seenBuf[:0]
	var many map[string]bool // past 16 names
	i = SkipSpace(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return nil
	}
	for i < len(raw) {
		end, plain := ScanString(raw, i)
		if end < 0 {
			return errors.New("invalid object")
		}
		name, err := Unquote(raw[i:end], plain)
		if err != nil {
			return err
		}
		if err := noteName(name, &seen, &many); err != nil {
			return err
		}
		i = SkipSpace(raw, end)
		if i >= len(raw) || raw[i] != ':' {
			return errors.New("invalid object")
		}
		start := SkipSpace(raw, i+1)
		if i = skipValue(raw, start); i < 0 {
			return errors.New("invalid object")
		}
		if err := fn(name, raw[start:i]); err != nil {
			return err
		}
		i = SkipSpace(raw, i)
		if i < len(raw) && raw[i] == ',' {
			i = SkipSpace(raw, i+1)
			continue
		}
		break
	}
	return nil
}

// noteName records a member name, refusing one seen before.
func noteName(name string, seen *[]string, many *map[string]bool) error {
	if *many != nil {
		if (*many)[name] {
			return fmt.Errorf("%w %q", errDuplicateMember, name)
		}
		(*many)[name] = true
		return nil
	}
	for _, n := range *seen {
		if n == name {
			return fmt.Errorf("%w %q", errDuplicateMember, name)
		}
	}
	if *seen = append(*seen, name); len(*seen) > 16 {
		*many = make(map[string]bool, 2*len(*seen))
		for _, n := range *seen {
			(*many)[n] = true
		}
	}
	return nil
}

// forkNoDuplicates refuses a value holding an object with a duplicate
// member at any depth (what decoding it into interface{} checks).
func forkNoDuplicates(raw []byte) error {
	i := SkipSpace(raw, 0)
	if i >= len(raw) {
		return nil
	}
	switch raw[i] {
	case '{':
		return forkObject(raw[i:], func(_ string, v []byte) error { return forkNoDuplicates(v) })
	case '[':
		return forkArray(raw[i:], forkNoDuplicates)
	}
	return nil
}

// forkArray calls fn for each element of the array raw.
func forkArray(raw []byte, fn func(elem []byte) error) error {
	i := SkipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return errors.New("not an array")
	}
	i = SkipSpace(raw, i+1)
	if i < len(raw) && raw[i] == ']' {
		return nil
	}
	for i < len(raw) {
		start := i
		if i = skipValue(raw, start); i < 0 {
			return errors.New("invalid array")
		}
		if err := fn(raw[start:i]); err != nil {
			return err
		}
		i = SkipSpace(raw, i)
		if i < len(raw) && raw[i] == ',' {
			i = SkipSpace(raw, i+1)
			continue
		}
		break
	}
	return nil
}

func isNull(raw []byte) bool {
	i := SkipSpace(raw, 0)
	return len(raw)-i >= 4 && string(raw[i:i+4]) == "null"
}

// Unquote decodes a JSON string literal; plain literals (printable ASCII,
// no escapes) are their own bytes.
func Unquote(lit []byte, plain bool) (string, error) {
	if plain {
		return string(lit[1 : len(lit)-1]), nil
	}
	var s string
	if err := json.Unmarshal(lit, &s); err != nil {
		return "", errors.New("invalid string")
	}
	return s, nil
}

// forkString decodes a string member: null leaves dst alone, anything but
// a string is an error.
func forkString(v []byte, dst *string) error {
	if isNull(v) {
		return nil
	}
	i := SkipSpace(v, 0)
	if i >= len(v) || v[i] != '"' {
		return errors.New("not a string")
	}
	end, plain := ScanString(v, i)
	if end < 0 {
		return errors.New("not a string")
	}
	s, err := Unquote(v[i:end], plain)
	if err != nil {
		return err
	}
	*dst = s
	return nil
}

// forkBool decodes a bool member; null leaves it alone.
func forkBool(v []byte) error {
	if isNull(v) {
		return nil
	}
	var b bool
	if json.Unmarshal(v, &b) != nil {
		return errors.New("not a boolean")
	}
	return nil
}

// forkStrings decodes a list of strings (null elements are "").
func forkStrings(v []byte, dst *[]string) error {
	if isNull(v) {
		*dst = nil
		return nil
	}
	out := []string{}
	err := forkArray(v, func(e []byte) error {
		var s string
		if err := forkString(e, &s); err != nil {
			return err
		}
		out = append(out, s)
		return nil
	})
	if err != nil {
		return fmt.Errorf("not a list of strings: %w", err)
	}
	*dst = out
	return nil
}

// forkBase64 decodes a base64url byte string member (go-jose's
// byteBuffer): "" is present but empty.
func forkBase64(v []byte, dst *[]byte) error {
	var s string
	i := SkipSpace(v, 0)
	if i >= len(v) || v[i] != '"' {
		return errors.New("byte string is not a string")
	}
	if err := forkString(v, &s); err != nil {
		return err
	}
	if s == "" {
		*dst = []byte{}
		return nil
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return errors.New("byte string is not unpadded base64url")
	}
	*dst = b
	return nil
}

// forkURL checks an x5u member as go-jose v2 decodes it into *url.URL: a
// string is an error (url.URL is a struct to encoding/json), an object
// fills the struct's exported fields.
func forkURL(v []byte) error {
	if isNull(v) {
		return nil
	}
	err := forkObject(v, func(name string, f []byte) error {
		var s string
		switch name {
		case "Scheme", "Opaque", "Host", "Path", "RawPath", "RawQuery", "Fragment", "RawFragment":
			return forkString(f, &s)
		case "ForceQuery", "OmitHost":
			return forkBool(f)
		case "User": // *url.Userinfo: no exported fields
			if isNull(f) {
				return nil
			}
			return forkObject(f, func(string, []byte) error { return nil })
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("x5u: %w", err)
	}
	return nil
}
