package cli

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// NotFoundError reports that a name given on the command line (a node, a
// member, a namespace, a backup, a restore) names nothing where it was
// looked for. It ends the program with ExitFailure: the tool ran, and
// found the problem.
type NotFoundError struct {
	// What is the kind of thing looked for: "node", "backup", ...
	What string
	// Name is the name given.
	Name string
	// Where says where it was looked for: "the cluster of
	// mgmt.kubeconfig", "namespace cozy-velero".
	Where string
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("%s %q not found in %s", e.What, e.Name, e.Where)
}

// NotFound returns a *NotFoundError.
func NotFound(what, name, where string) error {
	return &NotFoundError{What: what, Name: name, Where: where}
}

// CheckDNSLabel refuses (ExitUsage) a value of flag that is not an RFC
// 1123 DNS label, the form of a namespace or a node pool's name. An empty
// value passes: whether a flag is required is the caller's check.
func CheckDNSLabel(flag, value string) error {
	if value == "" {
		return nil
	}
	if errs := validation.IsDNS1123Label(value); len(errs) > 0 {
		return Usage("%s %q: %s", flag, value, strings.Join(errs, "; "))
	}
	return nil
}

// CheckDNSSubdomain refuses (ExitUsage) a value of flag that is not an
// RFC 1123 DNS subdomain, the form of most Kubernetes object names (nodes,
// pods, backups, restores). An empty value passes.
func CheckDNSSubdomain(flag, value string) error {
	if value == "" {
		return nil
	}
	if errs := validation.IsDNS1123Subdomain(value); len(errs) > 0 {
		return Usage("%s %q: %s", flag, value, strings.Join(errs, "; "))
	}
	return nil
}

// CheckHTTPSURL refuses (ExitUsage) a value of flag that is not an
// absolute https URL with a host. An empty value passes.
func CheckHTTPSURL(flag, value string) error {
	if value == "" {
		return nil
	}
	u, err := url.Parse(value)
	switch {
	case err != nil:
		return Usage("%s: %v", flag, err)
	case u.Scheme != "https" || u.Host == "":
		return Usage("%s %q is not an https URL (https://host[:port][/path])", flag, value)
	}
	return nil
}

// CheckOneOf refuses (ExitUsage) a value of flag that is not one of
// allowed.
func CheckOneOf(flag, value string, allowed ...string) error {
	if slices.Contains(allowed, value) {
		return nil
	}
	quoted := make([]string, len(allowed))
	for i, a := range allowed {
		quoted[i] = fmt.Sprintf("%q", a)
	}
	return Usage("%s %q: want one of %s", flag, value, strings.Join(quoted, ", "))
}

// ReadPEMCertificates reads the file a flag names and checks that it
// holds at least one PEM certificate and nothing that is not one; a
// missing, unreadable or malformed file is refused with ExitUsage. An
// empty path returns nil, nil.
func ReadPEMCertificates(flag, path string) ([]byte, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, Usage("%s: %v", flag, err)
	}
	rest, n := data, 0
	for {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			return nil, Usage("%s %s: a PEM %q block where certificates are expected", flag, path, b.Type)
		}
		if _, err := x509.ParseCertificate(b.Bytes); err != nil {
			return nil, Usage("%s %s: %v", flag, path, err)
		}
		n++
	}
	if n == 0 || strings.TrimSpace(string(rest)) != "" {
		return nil, Usage("%s %s: not a PEM file of certificates", flag, path)
	}
	return data, nil
}
