package tenant

import (
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/cozystack/tenantkit/ref"
)

// Check checks the object's names and its spec (see KubernetesSpec.Check).
func (k *Kubernetes) Check(p Platform) (Warnings, error) {
	var ps, ws problems
	k.nameProblems(&ps)
	for _, path := range k.unknown.paths("") {
		if !strings.HasPrefix(path, "spec.") {
			ws.add(path, kUnknownField, "not in the model; kept and written back")
		}
	}
	spec := k.Spec
	spec.unknown = k.specUnknown()
	spec.doc = k.specDoc()
	spec.check(p, &ps, &ws)
	return Warnings(ws), ps.err()
}

// nameProblems adds every problem of the object's namespace and name:
// a namespace that is not a tenant namespace, each way the name is not a
// DNS-1035 label (cozystack-api), a release over Helm's 53 characters and
// a release name Helm refuses.
func (k *Kubernetes) nameProblems(ps *problems) {
	c := k.Ref()
	if _, err := ref.ParseNamespace(c.Namespace); err != nil {
		ps.add("metadata", aNameDNS1035, trimInvalidName(err))
	}
	release := c.Release()
	if len(release) > ref.MaxReleaseLen {
		ps.add("metadata", hReleaseName53, fmt.Sprintf(
			"cluster name %q: release name %q is %d characters, over Helm's %d", c.Name, release, len(release), ref.MaxReleaseLen))
		ps.add("metadata", aNameLength, fmt.Sprintf("must be no more than %d characters (kubernetes-<name>)", ref.MaxReleaseLen))
	}
	for _, msg := range validation.IsDNS1035Label(c.Name) {
		ps.add("metadata", aNameDNS1035, fmt.Sprintf("cluster name %q: %s", c.Name, msg))
	}
	if !helmReleaseName.MatchString(release) {
		ps.add("metadata", hReleaseNameFormat, fmt.Sprintf(
			"Helm refuses the release name %q: lower-case alphanumerics, '-' and '.', starting and ending with an alphanumeric", release))
	}
}

func trimInvalidName(err error) string {
	return strings.TrimPrefix(err.Error(), ref.ErrInvalidName.Error()+": ")
}

// helmReleaseName is the form Helm requires of a release name
// (RULES.md H-release-name-format).
var helmReleaseName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)

// Check reports what the chart would refuse to render, or Helm and
// cozystack-api refuse to accept, for spec s on platform p: the error is
// nil or a *ValidationError listing every problem, each a *FieldError
// wrapping one of the package's sentinels with the chart's rule ID and
// message; each says who decides it (FieldError.Decider, and
// ValidationError.By for one decider's part): the chart, Helm,
// cozystack-api, or tenantkit where the chart renders what cannot work (an
// OIDC user without email, ErrEmptyName; an inline customConfig the
// cluster's apiserver will refuse, ErrCustomConfigUnreadable,
// ErrCustomConfigVersion). The warnings are what the chart accepts and
// tenantkit reports (see Warnings): fields the model does not know (and
// addons.fluxcd of a release without it), keys set twice, and its own
// rules (ErrMinReplicasNegative, ErrMaxReplicasBelowMin, ErrEmptyName of a
// GPU, ErrDuplicateUser, ErrNodeGroupUnsized, ErrNodeGroupResources
// without an instanceType). p.Release picks the Cozystack release.
//
// What only a document shows (missing required keys, explicit nulls, ""
// for a default) is checked by ParseSpec and ParseKubernetes; Check sees
// typed values, where "" means the default. Decisions that need a lookup
// in the management cluster (does an instance type exist, how big is it)
// are made with p.InstanceTypes and not without: kubelet totals are then
// checked for groups sized by resources only.
func (s KubernetesSpec) Check(p Platform) (Warnings, error) {
	var ps, ws problems
	s.check(p, &ps, &ws)
	return Warnings(ws), ps.err()
}

func (s KubernetesSpec) check(p Platform, ps, ws *problems) {
	p.checkRelease(ps)
	s.unknownProblems(ps, ws)
	s.docProblems(p.Release, ps, ws)
	if s.Version != "" && !s.Version.valid() {
		ps.add("spec.version", sVersionEnum, fmt.Sprintf("%q is not one of %s", s.Version, joinVersions()))
	}
	s.validateControlPlane(ps)
	s.validateOIDC(&p, ps, ws)
	s.validateAPIServer(ps)
	s.validateAddons(ps)
	s.validateNodeGroups(p.InstanceTypes, ps, ws)
	s.validateHealth(ps)
}

// unknownProblems sorts the fields the model does not know: a top-level
// key starting with "_" and a node group's ephemeralStorage are refused,
// unknown keys of an extra volume are volume sources (validateAPIServer),
// and the rest are warnings.
func (s KubernetesSpec) unknownProblems(ps, ws *problems) {
	u := s.unknown
	if u == nil {
		return
	}
	skip := map[string]bool{}
	for k := range u.fields {
		if strings.HasPrefix(k, "_") {
			ps.add("spec."+k, aInternalKeys, fmt.Sprintf("values key %q is reserved (keys starting with '_' are not allowed)", k))
			skip["spec."+k] = true
		}
	}
	for g, gu := range u.child("nodeGroups").children() {
		if _, ok := gu.fields["ephemeralStorage"]; ok {
			f := "spec.nodeGroups." + g + ".ephemeralStorage"
			ps.add(f, tEphemeralStorageRemoved, fmt.Sprintf("nodeGroup %q: ephemeralStorage is no longer supported and should have been automatically migrated to diskSize by platform migration 41. If you see this error after upgrading, the migration did not run — check the cozystack-migration-hook Job logs in cozy-system.", g))
			skip[f] = true
		}
	}
	cp := u.child("controlPlane")
	for _, c := range []struct {
		path string
		u    *unknownFields
	}{
		{"apiServer", cp.child("apiServer")}, {"controllerManager", cp.child("controllerManager")},
		{"scheduler", cp.child("scheduler")}, {"konnectivity.server", cp.child("konnectivity").child("server")},
	} {
		for _, k := range []string{"limits", "requests"} {
			if _, ok := c.u.child("resources").keys()[k]; ok {
				f := "spec.controlPlane." + c.path + ".resources." + k
				ps.add(f, tResourcesFlat, "ERROR: A flat map of resources expected, not nested `requests:` or `limits:` sections.")
				skip[f] = true
			}
		}
	}
	for i, item := range u.child("controlPlane").child("apiServer").child("extraVolumes").itemsByIndex() {
		for k := range item.fields {
			skip[fmt.Sprintf("spec.controlPlane.apiServer.extraVolumes[%d].%s", i, k)] = true
		}
	}
	for _, path := range u.paths("spec") {
		if !skip[path] {
			ws.add(path, kUnknownField, "not in the model; kept and written back")
		}
	}
}

func (s KubernetesSpec) validateControlPlane(ps *problems) {
	cp := s.ControlPlane
	for _, c := range []struct {
		field  string
		preset ResourcesPreset
	}{
		{"apiServer", cp.APIServer.ResourcesPreset},
		{"controllerManager", cp.ControllerManager.ResourcesPreset},
		{"scheduler", cp.Scheduler.ResourcesPreset},
		{"konnectivity.server", cp.Konnectivity.Server.ResourcesPreset},
	} {
		if c.preset != "" && !c.preset.Valid() {
			ps.add("spec.controlPlane."+c.field+".resourcesPreset", sResourcesPresetEnum,
				fmt.Sprintf("%q is not a resources preset (t1, c1, s1, u1 or m1 .nano to .4xlarge, or nano to 2xlarge)", c.preset))
		}
	}
}

// validateOIDC checks spec.oidc; a nil p skips the platform's OIDC flag.
func (s KubernetesSpec) validateOIDC(p *Platform, ps, ws *problems) {
	o := s.OIDC
	switch o.Mode {
	case "", OIDCNone:
	case OIDCSystem:
		if p != nil && !p.OIDCEnabled {
			ps.add("spec.oidc.mode", tOIDCSystemPlatform,
				"spec.oidc.mode: System requires the platform-level OIDC feature (authentication.oidc.enabled) — enable it in cozystack-values, or use mode: CustomConfig for a tenant-supplied issuer.")
		}
	case OIDCCustomConfig:
		inline, secret := o.CustomConfig.Config != "", o.CustomConfig.SecretRef.Name != ""
		switch {
		case inline && secret:
			ps.add("spec.oidc.customConfig", tOIDCCustomConfigBoth,
				"spec.oidc.customConfig: set exactly one of `config` (inline) or `secretRef.name` — they are mutually exclusive.")
		case !inline && !secret:
			ps.add("spec.oidc.customConfig", tOIDCCustomConfigNeither,
				"spec.oidc.mode: CustomConfig requires either spec.oidc.customConfig.config (inline AuthenticationConfiguration) or spec.oidc.customConfig.secretRef.name (Secret with config.yaml key).")
		case inline:
			s.customConfigProblems(ps)
		}
	default:
		ps.add("spec.oidc.mode", sOIDCModeEnum, fmt.Sprintf("%q is not one of None, System, CustomConfig", o.Mode))
	}
	first := map[string]int{}
	for i, u := range o.Users {
		f := fmt.Sprintf("spec.oidc.users[%d]", i)
		if u.Email == "" {
			ps.add(f+".email", kOIDCEmailEmpty,
				"no email: the chart renders a ClusterRoleBinding with an empty User subject, which the tenant apiserver refuses, so the chart's post-install Job fails and with it the Helm release")
		} else if j, dup := first[u.Email]; dup {
			ws.add(f+".email", kOIDCEmailDuplicate, fmt.Sprintf(
				"also users[%d]: the chart applies one ClusterRoleBinding of one name per entry, so the last entry's role wins", j))
		} else {
			first[u.Email] = i
		}
		if u.Role.ClusterRole() == "" {
			ps.add(f+".role", sOIDCUsers, fmt.Sprintf("%q is not one of admin, view", u.Role))
		}
	}
}

func joinVersions() string {
	vs := Versions()
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return strings.Join(out, ", ")
}
