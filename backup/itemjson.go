package backup

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
)

// itemID is what an item's JSON says it is: the top-level apiVersion and
// kind and metadata.name and metadata.namespace, with encoding/json's
// rules (exact keys, the last of duplicate keys wins). The slices point
// into the scanned buffer, or hold decoded copies of escaped strings.
type itemID struct {
	apiVersion, kind, name, namespace []byte
	// bad has bit 1<<field set for a field whose (last) value is present
	// but not a string (not an object, for metadata).
	bad uint8
}

// badField names the first field whose value has the wrong type, or "".
func (id *itemID) badField() string {
	for f := fieldAPIVersion; f <= fieldNamespace; f++ {
		if id.bad&(1<<f) != 0 {
			return fieldPath(f)
		}
	}
	return ""
}

// maxJSONDepth is encoding/json's nesting limit.
const maxJSONDepth = 10000

var errJSONDepth = errors.New("nested too deeply")

// jsonScanner checks JSON by hand, without reflection or allocation on
// the common path: it accepts exactly what encoding/json.Valid accepts.
type jsonScanner struct {
	b     []byte
	i     int
	depth int
	err   error
}

// scanItem checks that b is one JSON object (and nothing else but white
// space) and returns its identity fields.
func scanItem(b []byte) (itemID, error) {
	s := jsonScanner{b: b}
	var id itemID
	s.space()
	if s.i >= len(b) || b[s.i] != '{' {
		return id, s.fail("want a JSON object")
	}
	s.object(&id, 0)
	if s.err == nil {
		s.space()
		if s.i != len(b) {
			s.fail("data after the object")
		}
	}
	return id, s.err
}

// validJSON reports whether b is valid JSON, for the fuzz target's
// differential check against encoding/json.
func validJSON(b []byte) bool {
	s := jsonScanner{b: b}
	s.space()
	s.value()
	s.space()
	return s.err == nil && s.i == len(b)
}

func (s *jsonScanner) fail(msg string) error {
	if s.err == nil {
		s.err = fmt.Errorf("invalid JSON at offset %d: %s", s.i, msg)
	}
	return s.err
}

func (s *jsonScanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// field says which identity field an object key sets: level 0 is the
// top-level object, level 1 its metadata.
const (
	fieldNone = iota
	fieldAPIVersion
	fieldKind
	fieldMetadata
	fieldName
	fieldNamespace
)

func keyField(key []byte, level int) int {
	switch {
	case level == 0 && string(key) == "apiVersion":
		return fieldAPIVersion
	case level == 0 && string(key) == "kind":
		return fieldKind
	case level == 0 && string(key) == "metadata":
		return fieldMetadata
	case level == 1 && string(key) == "name":
		return fieldName
	case level == 1 && string(key) == "namespace":
		return fieldNamespace
	}
	return fieldNone
}

// object scans an object at s.i ('{'). level 0 and 1 collect identity
// fields into id (nil elsewhere).
func (s *jsonScanner) object(id *itemID, level int) {
	if s.depth++; s.depth > maxJSONDepth {
		s.err = errJSONDepth
		return
	}
	s.i++ // '{'
	s.space()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		s.depth--
		return
	}
	for s.err == nil {
		if s.i >= len(s.b) || s.b[s.i] != '"' {
			s.fail("want a key")
			return
		}
		key := s.str()
		if s.err != nil {
			return
		}
		s.space()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			s.fail("want ':'")
			return
		}
		s.i++
		s.space()
		f := fieldNone
		if id != nil && s.err == nil {
			f = keyField(key, level)
		}
		s.member(id, f)
		s.space()
		if s.i >= len(s.b) {
			s.fail("unterminated object")
			return
		}
		switch s.b[s.i] {
		case ',':
			s.i++
			s.space()
		case '}':
			s.i++
			s.depth--
			return
		default:
			s.fail("want ',' or '}'")
			return
		}
	}
}

// member scans one value, recording it when it is an identity field.
func (s *jsonScanner) member(id *itemID, f int) {
	if f == fieldNone {
		s.value()
		return
	}
	isStr := s.i < len(s.b) && s.b[s.i] == '"'
	isObj := s.i < len(s.b) && s.b[s.i] == '{'
	if f == fieldMetadata {
		// The last metadata wins, with everything in it.
		id.name, id.namespace = nil, nil
		id.bad &^= 1<<fieldMetadata | 1<<fieldName | 1<<fieldNamespace
		if isObj {
			s.object(id, 1)
			return
		}
		id.bad |= 1 << fieldMetadata
		s.value()
		return
	}
	if isStr {
		v := s.str()
		if v == nil {
			v = []byte{} // present but empty
		}
		setField(id, f, v)
		return
	}
	setField(id, f, nil)
	id.bad |= 1 << f
	s.value()
}

func setField(id *itemID, f int, v []byte) {
	id.bad &^= 1 << f
	switch f {
	case fieldAPIVersion:
		id.apiVersion = v
	case fieldKind:
		id.kind = v
	case fieldName:
		id.name = v
	case fieldNamespace:
		id.namespace = v
	}
}

func fieldPath(f int) string {
	switch f {
	case fieldAPIVersion:
		return "apiVersion"
	case fieldKind:
		return "kind"
	case fieldName:
		return "metadata.name"
	case fieldNamespace:
		return "metadata.namespace"
	case fieldMetadata:
		return "metadata"
	}
	return ""
}

func (s *jsonScanner) value() {
	if s.i >= len(s.b) {
		s.fail("want a value")
		return
	}
	switch c := s.b[s.i]; {
	case c == '{':
		s.object(nil, -1)
	case c == '[':
		s.array()
	case c == '"':
		s.str()
	case c == '-' || (c >= '0' && c <= '9'):
		s.number()
	case c == 't':
		s.literal("true")
	case c == 'f':
		s.literal("false")
	case c == 'n':
		s.literal("null")
	default:
		s.fail("want a value")
	}
}

func (s *jsonScanner) array() {
	if s.depth++; s.depth > maxJSONDepth {
		s.err = errJSONDepth
		return
	}
	s.i++ // '['
	s.space()
	if s.i < len(s.b) && s.b[s.i] == ']' {
		s.i++
		s.depth--
		return
	}
	for s.err == nil {
		s.value()
		s.space()
		if s.i >= len(s.b) {
			s.fail("unterminated array")
			return
		}
		switch s.b[s.i] {
		case ',':
			s.i++
			s.space()
		case ']':
			s.i++
			s.depth--
			return
		default:
			s.fail("want ',' or ']'")
			return
		}
	}
}

func (s *jsonScanner) literal(lit string) {
	if len(s.b)-s.i < len(lit) || string(s.b[s.i:s.i+len(lit)]) != lit {
		s.fail("bad literal")
		return
	}
	s.i += len(lit)
}

func (s *jsonScanner) digits() int {
	n := 0
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
		n++
	}
	return n
}

func (s *jsonScanner) number() {
	if s.b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.b) && s.b[s.i] == '0':
		s.i++
	case s.digits() == 0:
		s.fail("bad number")
		return
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if s.digits() == 0 {
			s.fail("bad number")
			return
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if s.digits() == 0 {
			s.fail("bad number")
		}
	}
}

const (
	lo8 = 0x0101010101010101
	hi8 = 0x8080808080808080
)

// special reports whether any byte of the 8 in x is '"', '\\' or a
// control character (< 0x20): the bytes a string scan must stop at.
func special(x uint64) bool {
	q := x ^ (lo8 * '"')
	bs := x ^ (lo8 * '\\')
	return ((q-lo8)&^q|(bs-lo8)&^bs|(x-lo8*0x20)&^x)&hi8 != 0
}

// str scans a string at s.i ('"') and returns its content: a slice of
// s.b, or a decoded copy when it holds escapes. It returns nil on error.
func (s *jsonScanner) str() []byte {
	start := s.i + 1
	i := start
	escaped := false
	for {
		for i+8 <= len(s.b) && !special(binary.LittleEndian.Uint64(s.b[i:])) {
			i += 8
		}
		if i >= len(s.b) {
			s.i = i
			s.fail("unterminated string")
			return nil
		}
		switch c := s.b[i]; {
		case c == '"':
			s.i = i + 1
			if !escaped {
				return s.b[start:i]
			}
			var out string
			if err := json.Unmarshal(s.b[start-1:i+1], &out); err != nil {
				s.fail("bad string")
				return nil
			}
			return []byte(out)
		case c == '\\':
			escaped = true
			n := escapeLen(s.b[i:])
			if n == 0 {
				s.i = i
				s.fail("bad escape")
				return nil
			}
			i += n
		case c < 0x20:
			s.i = i
			s.fail("control character in string")
			return nil
		default:
			i++
		}
	}
}

// escapeLen returns the length of the escape sequence at b[0] ('\\'), or
// 0 if it is not valid.
func escapeLen(b []byte) int {
	if len(b) < 2 {
		return 0
	}
	switch b[1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		if len(b) < 6 {
			return 0
		}
		for _, c := range b[2:6] {
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return 0
			}
		}
		return 6
	}
	return 0
}
