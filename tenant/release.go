package tenant

import (
	"fmt"
	"slices"
	"strings"
)

// Release names the state of Cozystack's kubernetes chart whose decisions
// Check mirrors (Platform.Release). Each is a commit of
// cozystack/cozystack main, named by its date; the rules of the releases
// differ only where the constants say so, and each has its own golden
// corpus (testdata/chart/cases, a case naming the releases it holds for).
//
// The tagged releases v1.6.0–v1.6.2 are not mirrored: their chart predates
// podCpuLimit, podCpuRequest, logSerialConsole, talos.registryMirrors,
// maxNodeProvisionTime and the node-health durations, which both releases
// below carry.
type Release string

// For maintainers: to add the next release: add a constant and list it in Releases (newest
// last, so that LatestRelease follows), give it its differences in the
// methods below (a new method for a new kind of difference), name it in
// the cases whose verdict it changes (a case without "releases" holds for
// every release), and describe the commit in testdata/chart/RULES.md §0.

const (
	// Release20260819 is cozystack main at 4385990 (2026-08-19, the parent
	// of 7cca3d75e): the chart still has the FluxCD tenant addon
	// (addons.fluxcd, required by its schema; templates/helmreleases/
	// fluxcd.yaml renders <release>-fluxcd-operator and <release>-fluxcd).
	Release20260819 Release = "main-2026-08-19"
	// Release20260821 is cozystack main at 3c780ac (2026-08-21): commit
	// 7cca3d75e ("feat(kubernetes)!: remove the FluxCD tenant addon",
	// committed 2026-08-20) removed addons.fluxcd from the schema, the
	// values and the templates, so a document's addons.fluxcd is an unknown
	// field the chart ignores.
	Release20260821 Release = "main-2026-08-21"

	// LatestRelease is the newest release tenantkit mirrors; a zero
	// Platform.Release means it.
	LatestRelease = Release20260821
)

// Releases lists the releases tenantkit mirrors, oldest first.
func Releases() []Release { return []Release{Release20260819, Release20260821} }

// Valid reports whether r is one of Releases (or zero, the latest).
func (r Release) Valid() bool { return r == "" || slices.Contains(Releases(), r) }

// orLatest returns r, or LatestRelease for the zero value.
func (r Release) orLatest() Release {
	if r == "" {
		return LatestRelease
	}
	return r
}

// HasFluxCD reports whether the chart of release r has the FluxCD addon
// (addons.fluxcd): before cozystack 7cca3d75e (2026-08-20) it has.
func (r Release) HasFluxCD() bool { return r.orLatest() == Release20260819 }

// String returns the release's name.
func (r Release) String() string { return string(r.orLatest()) }

// checkRelease refuses a release tenantkit does not mirror.
func (p Platform) checkRelease(ps *problems) {
	if !p.Release.Valid() {
		names := make([]string, 0, len(Releases()))
		for _, r := range Releases() {
			names = append(names, string(r))
		}
		ps.addFE(&FieldError{Field: "platform.release", Err: ErrUnknownRelease, Detail: fmt.Sprintf("%q is not one of %s", p.Release, strings.Join(names, ", "))})
	}
}

// docProblems reports what ParseSpec saw in the document and left to
// Check: keys set twice (warnings, K-duplicate-key) and, by release, the
// FluxCD addon. A release with it refuses what the document check found
// under addons.fluxcd (an explicit null on its required keys); a release
// without it ignores addons.fluxcd, which Check reports as an unknown
// field when it is enabled or has overrides.
func (s KubernetesSpec) docProblems(r Release, ps, ws *problems) {
	if s.doc != nil {
		for _, path := range s.doc.duplicates {
			ws.add(path, kDuplicateKey, "set twice in the document; the last value counts, as in Helm")
		}
	}
	if r.HasFluxCD() {
		if s.doc != nil {
			for _, fe := range s.doc.fluxcd {
				ps.addFE(fe)
			}
		}
		return
	}
	if s.Addons.FluxCD.Enabled || s.Addons.FluxCD.ValuesOverride != nil {
		ws.add("spec.addons.fluxcd", kUnknownField, fmt.Sprintf(
			"the chart of release %s has no FluxCD addon (removed by cozystack 7cca3d75e); kept and written back, ignored by the chart", r.orLatest()))
	}
}

// docFacts are what ParseSpec saw in the document that Check decides on;
// nil when there is nothing.
type docFacts struct {
	duplicates []string      // keys set twice (the last value counts)
	fluxcd     []*FieldError // problems under addons.fluxcd, for a release with the addon
}

// specDoc returns what the document showed of k's spec: the record the
// Spec value carries (from ParseSpec), else the one ParseKubernetes kept
// with the object, so that NewKubernetes(c, spec).Check and spec.Check
// give one answer.
func (k *Kubernetes) specDoc() *docFacts {
	if k.Spec.doc != nil {
		return k.Spec.doc
	}
	return k.doc
}

// newDocFacts records the duplicate keys of a document and moves the
// problems under addons.fluxcd out of ps: whether they are refusals
// depends on the release, which Check knows. It returns nil when there is
// nothing to record.
func newDocFacts(data []byte, prefix, path string, ps *problems) *docFacts {
	d := &docFacts{duplicates: duplicateKeys(data, prefix)}
	flux := path + ".addons.fluxcd"
	kept := (*ps)[:0]
	for _, fe := range *ps {
		if fe.Field == flux || strings.HasPrefix(fe.Field, flux+".") {
			d.fluxcd = append(d.fluxcd, fe)
			continue
		}
		kept = append(kept, fe)
	}
	*ps = kept
	if len(d.duplicates) == 0 && len(d.fluxcd) == 0 {
		return nil
	}
	return d
}
