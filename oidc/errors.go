package oidc

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Errors about configuration: what the renderer, NewVerifier and the RBAC
// planner refuse. Branch on them with errors.Is.
var (
	// ErrInvalidConfig is returned for a configuration the apiserver would
	// refuse (see *ConfigError for the field errors) or that this package
	// cannot use.
	ErrInvalidConfig = errors.New("oidc: invalid config")
	// ErrUnknownMode is returned for a Mode other than None, System and
	// CustomConfig.
	ErrUnknownMode = errors.New("oidc: unknown mode")
	// ErrNoIssuer is returned in System mode when neither the platform root
	// host nor an issuer URL is set (platform OIDC is not enabled).
	ErrNoIssuer = errors.New("oidc: System mode needs the platform root host (is platform OIDC enabled?)")
	// ErrCustomConfigAmbiguous is returned in CustomConfig mode when both an
	// inline config and a Secret reference are set.
	ErrCustomConfigAmbiguous = errors.New("oidc: CustomConfig: set exactly one of config (inline) or secretRef.name")
	// ErrCustomConfigMissing is returned in CustomConfig mode when neither an
	// inline config nor a Secret reference is set.
	ErrCustomConfigMissing = errors.New("oidc: CustomConfig requires either config (inline) or secretRef.name")
	// ErrLegacyOIDCFlag is returned when the apiserver's extra arguments carry
	// an --oidc-* or --authentication-config flag while OIDC is on: the
	// apiserver refuses to mix them with the configuration file.
	ErrLegacyOIDCFlag = errors.New("oidc: legacy --oidc-* and --authentication-config flags cannot be combined with OIDC mode")
	// ErrReservedVolume is returned when a user-supplied apiserver volume is
	// named "authentication-config" while OIDC is on.
	ErrReservedVolume = errors.New("oidc: volume name authentication-config is reserved while OIDC is on")
	// ErrUnsupportedVersion is returned for a Kubernetes version without
	// structured authentication configuration (before 1.30) or one that
	// cannot be parsed.
	ErrUnsupportedVersion = errors.New("oidc: unsupported Kubernetes version")
	// ErrInvalidUser is returned by the RBAC planner for a user without an
	// email or with a role other than admin and view.
	ErrInvalidUser = errors.New("oidc: invalid user")
)

// ConfigError lists what is wrong with an AuthenticationConfiguration, in
// the apiserver's own words (its validation's field errors).
type ConfigError struct {
	// Errs are the field errors from k8s.io/apiserver's validation.
	Errs field.ErrorList
}

func (e *ConfigError) Error() string {
	msgs := make([]string, 0, len(e.Errs))
	for _, fe := range e.Errs {
		msgs = append(msgs, fe.Error())
	}
	return "oidc: invalid authentication configuration: " + strings.Join(msgs, "; ")
}

// Unwrap returns ErrInvalidConfig.
func (e *ConfigError) Unwrap() error { return ErrInvalidConfig }

// invalidf returns an error wrapping ErrInvalidConfig.
func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidConfig}, args...)...)
}
