package ref

import (
	"fmt"
	"regexp"
	"strings"
)

// RootNamespace is the namespace of the root tenant.
const RootNamespace = "tenant-root"

// rootTenant is the name of the root tenant.
const rootTenant = "root"

// maxNamespaceLen is Kubernetes' limit on namespace names (a DNS label).
const maxNamespaceLen = 63

// tenantName is what the tenant chart accepts as a tenant name: a DNS label
// without dashes (the dash separates levels of the hierarchy).
var tenantName = regexp.MustCompile(`^[a-z0-9]+$`)

// validateTenantName checks that name can name a tenant: lower-case letters
// and digits only, because the chart joins levels of the hierarchy with '-'.
func validateTenantName(name string) error {
	if !tenantName.MatchString(name) {
		return fmt.Errorf("%w: tenant name %q: use lower-case letters and digits only (no dashes)", ErrInvalidName, name)
	}
	return nil
}

// ChildNamespace returns the namespace of tenant name created in the tenant
// namespace parent, as the tenant chart names it: "tenant-<name>" under
// tenant-root, "<parent>-<name>" below that.
func ChildNamespace(parent, name string) (string, error) {
	if _, err := ParseNamespace(parent); err != nil {
		return "", err
	}
	if err := validateTenantName(name); err != nil {
		return "", err
	}
	if parent == RootNamespace {
		return "tenant-" + name, nil
	}
	ns := parent + "-" + name
	if len(ns) > maxNamespaceLen {
		return "", fmt.Errorf("%w: namespace %q is longer than %d characters", ErrInvalidName, ns, maxNamespaceLen)
	}
	return ns, nil
}

// ParseNamespace returns the path of tenant names from the root to the
// tenant of namespace ns: tenant-root → [root], tenant-acme → [root acme],
// tenant-acme-dev → [root acme dev].
func ParseNamespace(ns string) ([]string, error) {
	rest, ok := strings.CutPrefix(ns, "tenant-")
	if !ok || rest == "" || len(ns) > maxNamespaceLen {
		return nil, notTenantNamespace(ns)
	}
	if ns == RootNamespace {
		return []string{rootTenant}, nil
	}
	path := []string{rootTenant}
	for _, name := range strings.Split(rest, "-") {
		if !tenantName.MatchString(name) || name == rootTenant && len(path) == 1 {
			return nil, notTenantNamespace(ns)
		}
		path = append(path, name)
	}
	return path, nil
}

func notTenantNamespace(ns string) error {
	return fmt.Errorf("%w: %q is not a tenant namespace (tenant-<name>[-<name>...])", ErrInvalidName, ns)
}

// ParentNamespace returns the namespace of the tenant that owns ns:
// tenant-root for tenant-acme, tenant-acme for tenant-acme-dev. The root has
// no parent: ok is false.
func ParentNamespace(ns string) (parent string, ok bool, err error) {
	path, err := ParseNamespace(ns)
	if err != nil || len(path) == 1 {
		return "", false, err
	}
	if len(path) == 2 {
		return RootNamespace, true, nil
	}
	return ns[:strings.LastIndexByte(ns, '-')], true, nil
}

// Ancestors returns the tenant namespaces from the root down to ns itself:
// [tenant-root tenant-acme tenant-acme-dev] for tenant-acme-dev.
func Ancestors(ns string) ([]string, error) {
	path, err := ParseNamespace(ns)
	if err != nil {
		return nil, err
	}
	out := []string{RootNamespace}
	cur := "tenant"
	for _, name := range path[1:] {
		cur += "-" + name
		out = append(out, cur)
	}
	return out, nil
}
