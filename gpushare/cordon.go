package gpushare

import (
	"fmt"
	"strings"
	"unicode"
)

// DecodeCordon decodes hami.io/device-cordon (HAMi v2.10): a comma-separated
// list of GPU UUIDs excluded from new allocations. Entries are trimmed and
// empty ones skipped; an entry with inner white space or control characters
// is an *AnnotationError.
func DecodeCordon(value string) ([]string, error) {
	var ids []string
	for raw := range strings.SplitSeq(value, ",") {
		id := strings.TrimSpace(raw)
		if id == "" {
			continue
		}
		if strings.IndexFunc(id, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
			return nil, &AnnotationError{Key: AnnotationCordon, Value: value,
				Reason: fmt.Sprintf("entry %q: space or control character inside a UUID", id)}
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// EncodeCordon writes UUIDs as a hami.io/device-cordon value.
func EncodeCordon(ids []string) string { return strings.Join(ids, ",") }
