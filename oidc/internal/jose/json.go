package jose

// JSON scanning: Valid, ScanValue and ScanString accept exactly what
// encoding/json's scanner accepts (fuzzed against json.Valid), without
// decoding anything. fork.go reads JSON the way go-jose v2 decodes it.

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
