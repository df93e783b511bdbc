package tenant

import (
	"errors"
	"strings"
)

// Errors of the model: values outside the chart's schema and decoding.
var (
	// ErrInvalidValue is returned for a value the application's schema
	// refuses: a version, mode, role, resources preset or expose method
	// outside its enum, or "" where only an absent key means the default.
	ErrInvalidValue = errors.New("tenant: invalid value")
	// ErrRequiredField is returned when a document leaves out a key the
	// chart's schema requires and nothing supplies: minReplicas,
	// maxReplicas, instanceType and diskSize of every node group (the
	// chart's values give node groups no defaults), gpus[].name,
	// oidc.users[].email and .role.
	ErrRequiredField = errors.New("tenant: required field missing")
	// ErrNullValue is returned when a document sets a key to null where the
	// chart cannot take it: Helm deletes a key set to null, so a required
	// key (addons.*.enabled, controlPlane.replicas, oidc.mode, ...) goes
	// missing and the schema refuses the values, and version: null leaves
	// the chart without a Kubernetes version.
	ErrNullValue = errors.New("tenant: null deletes a value the chart needs")
	// ErrReservedKey is returned for a top-level key starting with "_":
	// cozystack-api refuses them, the platform's _cluster and _namespace
	// values are its own.
	ErrReservedKey = errors.New("tenant: values keys starting with '_' are reserved")
	// ErrMalformed is returned when a document is not valid YAML or JSON, or a
	// value has the wrong type.
	ErrMalformed = errors.New("tenant: malformed document")
	// ErrIntegerRange is a whole number beyond the integer field it sits
	// in (beyond int64: maxReplicas: 9223372036854775808,
	// controlPlane.replicas: 1e20). The chart's schema takes it as an
	// integer and Helm renders it as a float (9.223372036854776e+18),
	// which the objects the chart renders cannot take as a count;
	// tenantkit refuses it, as its own rule (K-integer-range, decider
	// tenantkit), where the parsers would otherwise call the document
	// malformed. ParseSpec and ParseKubernetes report it with the
	// document's other problems, leaving the field unset.
	ErrIntegerRange = errors.New("tenant: integer out of range")
	// ErrUnknownField names a field the model does not know. The chart's
	// schema allows unknown fields and its templates ignore them, so for a
	// Kubernetes application it is a warning of Check (a typo such as
	// "verison" is reported, never silently dropped) and the field is kept
	// and written back. ParseTenant still refuses them (an error).
	ErrUnknownField = errors.New("tenant: unknown field")
	// ErrDuplicateField is a document setting the same field twice: a
	// warning of ParseSpec and ParseKubernetes (K-duplicate-key; the last
	// value counts, as in Helm), an error of ParseTenant.
	ErrDuplicateField = errors.New("tenant: duplicate field")
	// ErrUnknownRelease is returned by Check for a Platform.Release that
	// is not one of Releases.
	ErrUnknownRelease = errors.New("tenant: unknown Cozystack release")
)

// FieldError is one problem with one field. Err is one of the package's
// sentinels; Rule names the chart rule it mirrors; Detail says what
// exactly is wrong, in the chart's own words where the chart has them.
type FieldError struct {
	// Field is the path of the field, as in the application's spec:
	// "spec.controlPlane.apiServer.extraVolumes[1].name".
	Field string
	// Err is the sentinel naming the rule, such as ErrReservedVolume.
	Err error
	// Rule is the rule's ID in the catalogue of the chart's decisions
	// (tenant/testdata/chart/RULES.md): "S-..." the values schema, "T-..."
	// a template fail, "H-..." Helm, "A-..." cozystack-api, "K-..." a rule
	// of tenantkit's own (a warning, or an error where the chart renders
	// what cannot work). Empty for syntax errors. Decider says which.
	Rule string
	// Detail describes the offending value; it never holds secrets.
	Detail string
}

// Error returns "tenant: <field>: <rule>[: <detail>]".
func (e *FieldError) Error() string {
	var b strings.Builder
	b.WriteString("tenant: ")
	b.WriteString(e.Field)
	b.WriteString(": ")
	msg := e.Err.Error()
	for _, pkg := range []string{"tenant: ", "oidc: "} {
		msg = strings.TrimPrefix(msg, pkg)
	}
	b.WriteString(msg)
	if e.Detail != "" && e.Detail != msg {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	return b.String()
}

// Unwrap returns the sentinel.
func (e *FieldError) Unwrap() error { return e.Err }

// ValidationError lists every problem found in one object, in field order.
// errors.Is(err, ErrX) reports whether any of them is ErrX; errors.As finds
// the first *FieldError.
type ValidationError struct {
	// Errors holds one entry per problem; it is never empty.
	Errors []*FieldError
}

// Error joins the problems with "; ".
func (e *ValidationError) Error() string {
	msgs := make([]string, len(e.Errors))
	for i, fe := range e.Errors {
		msgs[i] = fe.Error()
	}
	return strings.Join(msgs, "; ")
}

// Unwrap returns the problems, for errors.Is and errors.As.
func (e *ValidationError) Unwrap() []error {
	out := make([]error, len(e.Errors))
	for i, fe := range e.Errors {
		out[i] = fe
	}
	return out
}

// Has reports whether any problem matches target (a sentinel).
func (e *ValidationError) Has(target error) bool {
	for _, fe := range e.Errors {
		if errors.Is(fe.Err, target) {
			return true
		}
	}
	return false
}

// Rules returns the rule IDs of the problems, in order, without repeats.
func (e *ValidationError) Rules() []string { return rulesOf(e.Errors) }

// Warnings are what Check reports about values the chart accepts but
// tenantkit would not write: fields the model does not know, and the rules
// tenantkit had before it followed the chart (a negative minReplicas, an
// empty GPU name, ...), each a *FieldError whose Rule starts with "K-".
// A caller that wants them refused refuses a non-empty Warnings.
type Warnings []*FieldError

// Has reports whether any warning matches target (a sentinel).
func (w Warnings) Has(target error) bool {
	for _, fe := range w {
		if errors.Is(fe.Err, target) {
			return true
		}
	}
	return false
}

// Rules returns the rule IDs of the warnings, in order, without repeats.
func (w Warnings) Rules() []string { return rulesOf(w) }

// String lists the warnings one per line as "field: problem: detail",
// without the "tenant: " prefix of each error and without a trailing
// newline; a warning listed twice is listed once. No warnings is "".
func (w Warnings) String() string {
	lines := make([]string, 0, len(w))
	seen := map[string]bool{}
	for _, fe := range w {
		if l := strings.TrimPrefix(fe.Error(), "tenant: "); !seen[l] {
			seen[l] = true
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}

func rulesOf(fes []*FieldError) []string {
	var out []string
	seen := map[string]bool{}
	for _, fe := range fes {
		if fe.Rule != "" && !seen[fe.Rule] {
			seen[fe.Rule] = true
			out = append(out, fe.Rule)
		}
	}
	return out
}

// problems collects field errors; err returns nil or a *ValidationError.
type problems []*FieldError

// add records a problem of rule (a RULES.md ID) with sentinel err.
func (p *problems) add(field, rule string, err error, detail string) {
	*p = append(*p, &FieldError{Field: field, Err: err, Rule: rule, Detail: detail})
}

func (p problems) err() error {
	if len(p) == 0 {
		return nil
	}
	return &ValidationError{Errors: p}
}
