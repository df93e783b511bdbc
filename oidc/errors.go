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
	// ErrNoIssuer is returned in System mode when neither the platform root
	// host nor an issuer URL is set (platform OIDC is not enabled).
	ErrNoIssuer = errors.New("oidc: System mode needs the platform root host (is platform OIDC enabled?)")
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
