package tenant

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// validateAPIServer checks the apiserver's escape hatches the way the
// chart does: no legacy OIDC flags while OIDC is on, extra volumes with a
// unique, unreserved name and exactly one configMap or secret source (any
// key besides name counts as a source, unknown ones too), and mounts of
// declared volumes only.
func (s KubernetesSpec) validateAPIServer(ps *problems) {
	const base = "spec.controlPlane.apiServer"
	a := s.ControlPlane.APIServer
	oidcOn := s.OIDC.On()
	if oidcOn {
		for i, arg := range a.ExtraArgs {
			if strings.HasPrefix(arg, "--oidc-") || strings.HasPrefix(arg, "--authentication-config") {
				flag, _, _ := strings.Cut(arg, "=")
				ps.add(fmt.Sprintf("%s.extraArgs[%d]", base, i), tOIDCLegacyFlag,
					flag+": the chart renders --authentication-config itself while spec.oidc.mode is not None")
			}
		}
	}
	unknownVolumes := s.unknown.child("controlPlane").child("apiServer").child("extraVolumes")
	declared := map[string]bool{}
	for i, v := range a.ExtraVolumes {
		f := fmt.Sprintf("%s.extraVolumes[%d]", base, i)
		switch {
		case v.Name == "":
			ps.add(f+".name", tExtraVolumeNameRequired,
				fmt.Sprintf("controlPlane.apiServer.extraVolumes[%d]: every volume must set a non-empty name", i))
		case slices.Contains(reservedVolumes(), v.Name):
			ps.add(f+".name", tExtraVolumeReservedName, fmt.Sprintf(
				"controlPlane.apiServer.extraVolumes: volume name %q is reserved by the chart for the talos control-plane secrets — rename your volume to avoid a duplicate volume name in the control-plane Deployment", v.Name))
		case oidcOn && v.Name == AuthenticationConfigVolume:
			ps.add(f+".name", tOIDCAuthnVolumeReserved,
				fmt.Sprintf("%q: the chart mounts its AuthenticationConfiguration under this name while spec.oidc.mode is not None", v.Name))
		case declared[v.Name]:
			ps.add(f+".name", tExtraVolumeDuplicate, fmt.Sprintf(
				"controlPlane.apiServer.extraVolumes: duplicate volume name %q — each extra volume must have a unique name", v.Name))
		default:
			declared[v.Name] = true
		}
		srcs := volumeSources(v.VolumeSource)
		for k := range unknownVolumes.itemFor(i, v.Name).keys() {
			srcs = append(srcs, k)
		}
		slices.Sort(srcs)
		switch {
		case len(srcs) != 1:
			ps.add(f, tExtraVolumeOneSource, fmt.Sprintf(
				"controlPlane.apiServer.extraVolumes: volume %q must declare exactly one volume source, got %d (%v)", v.Name, len(srcs), srcs))
		case srcs[0] != "configMap" && srcs[0] != "secret":
			ps.add(f, tExtraVolumeSourceAllowed, fmt.Sprintf(
				"controlPlane.apiServer.extraVolumes: volume %q uses a %q source, which is not permitted on a management-cluster control-plane pod — only configMap and secret sources are allowed", v.Name, srcs[0]))
		}
	}
	for i, m := range a.ExtraVolumeMounts {
		f := fmt.Sprintf("%s.extraVolumeMounts[%d].name", base, i)
		switch {
		case m.Name == "":
			ps.add(f, tExtraVolumeMountNameRequired,
				fmt.Sprintf("controlPlane.apiServer.extraVolumeMounts[%d]: every mount must set a non-empty name", i))
		case !declared[m.Name]:
			ps.add(f, tExtraVolumeMountUndeclared, fmt.Sprintf(
				"controlPlane.apiServer.extraVolumeMounts: mount %q references no volume declared in controlPlane.apiServer.extraVolumes — the chart-managed talos volumes cannot be mounted", m.Name))
		}
	}
}

// volumeSources returns the JSON names of the sources set in vs.
func volumeSources(vs corev1.VolumeSource) []string {
	var out []string
	v := reflect.ValueOf(vs)
	t := v.Type()
	for i := range t.NumField() {
		if !v.Field(i).IsNil() {
			name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
			out = append(out, name)
		}
	}
	return out
}
