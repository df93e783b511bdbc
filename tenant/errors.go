package tenant

import (
	"errors"
	"strings"
)

// Errors of the chart's render failures. Validate returns them inside
// *FieldError values, so errors.Is works on the result of Validate.
var (
	// ErrOIDCPlatformDisabled is returned when oidc.mode is System but the
	// platform flag authentication.oidc.enabled is off: the chart refuses to
	// render the Keycloak client without the platform realm.
	ErrOIDCPlatformDisabled = errors.New("tenant: oidc mode System needs platform OIDC (authentication.oidc.enabled)")
	// ErrOIDCCustomConfigConflict is returned when oidc.mode is CustomConfig
	// and both customConfig.config and customConfig.secretRef.name are set.
	ErrOIDCCustomConfigConflict = errors.New("tenant: oidc mode CustomConfig takes customConfig.config or customConfig.secretRef, not both")
	// ErrOIDCCustomConfigMissing is returned when oidc.mode is CustomConfig
	// and neither customConfig.config nor customConfig.secretRef.name is set.
	ErrOIDCCustomConfigMissing = errors.New("tenant: oidc mode CustomConfig needs customConfig.config or customConfig.secretRef")
	// ErrLegacyOIDCFlag is returned when controlPlane.apiServer.extraArgs
	// holds an --oidc-* or --authentication-config flag while OIDC is on:
	// the chart injects --authentication-config itself, and kube-apiserver
	// refuses to start with both.
	ErrLegacyOIDCFlag = errors.New("tenant: --oidc-* and --authentication-config flags conflict with OIDC mode")
	// ErrReservedVolume is returned for an extra volume named talos-ca or
	// talos-tls-cert (always chart-owned) or authentication-config
	// (chart-owned while OIDC is on).
	ErrReservedVolume = errors.New("tenant: volume name is reserved by the chart")
	// ErrVolumeSource is returned for an extra volume whose source is not
	// exactly one configMap or secret: the control-plane pod runs on the
	// management cluster, so host-reaching sources are refused.
	ErrVolumeSource = errors.New("tenant: extra volume needs exactly one source, configMap or secret")
	// ErrVolumeName is returned for an extra volume without a name.
	ErrVolumeName = errors.New("tenant: extra volume has no name")
	// ErrDuplicateVolume is returned when two extra volumes share a name.
	ErrDuplicateVolume = errors.New("tenant: duplicate extra volume name")
	// ErrUndeclaredVolumeMount is returned for an extra volume mount that
	// names no volume declared in controlPlane.apiServer.extraVolumes.
	ErrUndeclaredVolumeMount = errors.New("tenant: volume mount names no declared extra volume")
	// ErrHAMiRequiresGPUOperator is returned when addons.hami is enabled
	// without addons.gpuOperator.
	ErrHAMiRequiresGPUOperator = errors.New("tenant: addons.hami requires addons.gpuOperator to be enabled")
	// ErrOuroborosRequiresIngress is returned when addons.ouroboros is enabled
	// without addons.ingressNginx.
	ErrOuroborosRequiresIngress = errors.New("tenant: addons.ouroboros requires addons.ingressNginx to be enabled")
	// ErrNodeGroupResources is returned when a node group sets only one of
	// resources.cpu and resources.memory.
	ErrNodeGroupResources = errors.New("tenant: node group sets only one of resources.cpu and resources.memory; set both or neither")
	// ErrInvalidValue is returned for a value the application's schema
	// refuses: a version, mode, role or expose method outside its enum, or a
	// required field left empty.
	ErrInvalidValue = errors.New("tenant: invalid value")
)

// Errors of decoding.
var (
	// ErrMalformed is returned when a document is not valid YAML or JSON, or a
	// value has the wrong type.
	ErrMalformed = errors.New("tenant: malformed document")
	// ErrUnknownField is returned (inside a *FieldError) for a field the
	// model does not know, by the strict parsers of what users write
	// (ParseKubernetes, ParseSpec, ParseTenant): a typo is refused, never
	// dropped. Objects read from the API keep such fields instead (see
	// DecodeKubernetes).
	ErrUnknownField = errors.New("tenant: unknown field")
	// ErrDuplicateField is returned (inside a *FieldError) when a document
	// sets the same field twice.
	ErrDuplicateField = errors.New("tenant: duplicate field")
)

// FieldError is one problem with one field. Err is one of the package's
// sentinels; Detail says what exactly is wrong.
type FieldError struct {
	// Field is the path of the field, as in the application's spec:
	// "spec.controlPlane.apiServer.extraVolumes[1].name".
	Field string
	// Err is the sentinel naming the rule, such as ErrReservedVolume.
	Err error
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
	if e.Detail != "" {
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

// problems collects field errors; err returns nil or a *ValidationError.
type problems []*FieldError

func (p *problems) add(field string, err error, detail string) {
	*p = append(*p, &FieldError{Field: field, Err: err, Detail: detail})
}

func (p problems) err() error {
	if len(p) == 0 {
		return nil
	}
	return &ValidationError{Errors: p}
}
