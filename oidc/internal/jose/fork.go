package jose

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
)

// JSON as go-jose v2 decodes it (its fork of Go 1.6's encoding/json):
// object members match struct fields case-sensitively, and a duplicate
// member name in any object it decodes is an error. These helpers only
// walk input that has passed a syntax check (Valid).

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
// byteBuffer): "" is present (the caller records that) with no bytes.
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
		*dst = nil
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
