package tenant

// Decider says who makes a decision that Check reports: the chart (its
// values schema or a template's fail), Helm, cozystack-api (before Helm
// sees the values) or tenantkit itself. A *FieldError's Rule names it.
type Decider string

// The deciders.
const (
	// DecidedByChart is the chart: its values schema (rules S-...) or a
	// template's fail (T-...).
	DecidedByChart Decider = "chart"
	// DecidedByHelm is Helm itself (H-...), such as its release name limit.
	DecidedByHelm Decider = "helm"
	// DecidedByAPI is cozystack-api (A-...): a name that is not a DNS-1035
	// label, a top-level values key starting with "_". The chart would
	// render such values; the API refuses them first.
	DecidedByAPI Decider = "cozystack-api"
	// DecidedByTenantkit is tenantkit's own rule (K-...), where it is
	// stricter than the chart on purpose (see the package documentation).
	DecidedByTenantkit Decider = "tenantkit"
)

// Decider returns who decides e, from its Rule ("" for a syntax error,
// which is Helm's: it cannot read the values either).
func (e *FieldError) Decider() Decider { return deciderOf(e.Rule) }

// By returns the problems of e that the deciders ds decide, as a
// *ValidationError, or nil when there are none. By(DecidedByChart,
// DecidedByHelm) is what rendering the chart with Helm decides;
// By(DecidedByAPI) what cozystack-api refuses on create.
func (e *ValidationError) By(ds ...Decider) error {
	var out []*FieldError
	for _, fe := range e.Errors {
		for _, d := range ds {
			if fe.Decider() == d {
				out = append(out, fe)
				break
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return &ValidationError{Errors: out}
}
