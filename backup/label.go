package backup

import (
	"crypto/sha256"
	"encoding/hex"
)

// labelValue shortens a name to a valid label value the way Velero does
// (pkg/label.GetValidName): names over 63 characters keep their first 57
// characters and gain 6 hex digits of their SHA-256.
func labelValue(name string) string {
	const max = 63
	if len(name) <= max {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return name[:max-6] + hex.EncodeToString(sum[:])[:6]
}
