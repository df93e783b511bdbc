package backup

import (
	"sort"
	"strings"
)

// veleroTopLevel are the folders Velero allows directly under a backup
// storage location's prefix (pkg/persistence/object_store.go IsValid).
var veleroTopLevel = map[string]bool{
	"backups": true, "restores": true, "restic": true, "metadata": true, "plugins": true, "kopia": true,
}

// ValidatePrefix checks the form of a backup storage location prefix: empty
// (the bucket root) or a relative path of non-empty segments without "."
// and "..", leading or trailing slashes, or control characters. It does
// not look at the bucket; Store.CheckPrefix does.
func ValidatePrefix(prefix string) error {
	if prefix == "" {
		return nil
	}
	if strings.HasPrefix(prefix, "/") || strings.HasSuffix(prefix, "/") {
		return &PrefixError{Prefix: prefix, Reason: "must not start or end with a slash"}
	}
	for _, seg := range strings.Split(prefix, "/") {
		switch seg {
		case "":
			return &PrefixError{Prefix: prefix, Reason: "has an empty path segment"}
		case ".", "..":
			return &PrefixError{Prefix: prefix, Reason: "has a . or .. segment"}
		}
	}
	for _, r := range prefix {
		if r < 0x20 || r == 0x7f || r == '\\' {
			return &PrefixError{Prefix: prefix, Reason: "has a control character or backslash"}
		}
	}
	return nil
}

// ForeignFolders returns the top-level folder names (without the trailing
// slash) that Velero would refuse under a location prefix, sorted.
func ForeignFolders(folders []string) []string {
	var out []string
	for _, f := range folders {
		f = strings.TrimSuffix(f, "/")
		if !veleroTopLevel[f] {
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out
}
