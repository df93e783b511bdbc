package tenant

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/util/version"
)

// Version is a Kubernetes minor version the chart offers, such as "v1.35".
type Version string

// DefaultVersion is the chart's default Kubernetes version.
const DefaultVersion Version = "v1.35"

// Versions returns the versions the chart offers, newest first.
func Versions() []Version {
	return []Version{"v1.35", "v1.34", "v1.33", "v1.32", "v1.31"}
}

// valid reports whether the chart offers v.
func (v Version) valid() bool { return slices.Contains(Versions(), v) }

// The API versions of kube-apiserver's AuthenticationConfiguration file
// (--authentication-config).
const (
	// AuthenticationConfigV1Alpha1 is loaded from Kubernetes 1.29.
	AuthenticationConfigV1Alpha1 = "apiserver.config.k8s.io/v1alpha1"
	// AuthenticationConfigV1Beta1 is loaded from Kubernetes 1.30. The chart
	// renders it for every version it offers.
	AuthenticationConfigV1Beta1 = "apiserver.config.k8s.io/v1beta1"
	// AuthenticationConfigV1 is loaded from Kubernetes 1.34.
	AuthenticationConfigV1 = "apiserver.config.k8s.io/v1"
)

// authnConfigSince maps each AuthenticationConfiguration API version to the
// first Kubernetes minor that loads it. No version has been removed up to
// 1.37 (k8s.io/apiserver v0.37 registers all three).
var authnConfigSince = map[string]uint{
	AuthenticationConfigV1Alpha1: 29,
	AuthenticationConfigV1Beta1:  30,
	AuthenticationConfigV1:       34,
}

// AuthenticationConfigLoads reports whether kube-apiserver of
// kubernetesVersion ("v1.31", "1.33.2") loads an AuthenticationConfiguration
// of apiVersion. It is the one place of tenantkit that knows which
// versions load which: Check warns with it about an inline custom config
// (the chart stores the text verbatim), and package oidc's renderer
// refuses with it. An unparsable version or an unknown apiVersion is an
// error wrapping ErrInvalidValue.
func AuthenticationConfigLoads(kubernetesVersion, apiVersion string) (bool, error) {
	since, ok := authnConfigSince[apiVersion]
	if !ok {
		return false, fmt.Errorf("%w: %q is not an AuthenticationConfiguration API version", ErrInvalidValue, apiVersion)
	}
	minor, err := kubernetesMinor(kubernetesVersion)
	if err != nil {
		return false, err
	}
	return minor >= since, nil
}

// NewestAuthenticationConfig returns the newest AuthenticationConfiguration
// API version kube-apiserver of kubernetesVersion loads: v1 from 1.34,
// v1beta1 for 1.30 to 1.33, v1alpha1 for 1.29. Before 1.29 there is none
// (an error wrapping ErrInvalidValue).
func NewestAuthenticationConfig(kubernetesVersion string) (string, error) {
	minor, err := kubernetesMinor(kubernetesVersion)
	if err != nil {
		return "", err
	}
	for _, gv := range []string{AuthenticationConfigV1, AuthenticationConfigV1Beta1, AuthenticationConfigV1Alpha1} {
		if minor >= authnConfigSince[gv] {
			return gv, nil
		}
	}
	return "", fmt.Errorf("%w: Kubernetes %s has no structured authentication configuration (1.29 or later)", ErrInvalidValue, kubernetesVersion)
}

// kubernetesMinor returns the minor of a 1.x version.
func kubernetesMinor(kubernetesVersion string) (uint, error) {
	v, err := version.ParseGeneric(kubernetesVersion)
	if err != nil {
		return 0, fmt.Errorf("%w: Kubernetes version %q: %w", ErrInvalidValue, kubernetesVersion, err)
	}
	if v.Major() != 1 {
		return 0, fmt.Errorf("%w: Kubernetes version %q", ErrInvalidValue, kubernetesVersion)
	}
	return v.Minor(), nil
}
