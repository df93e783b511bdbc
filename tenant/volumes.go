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
// unique, unreserved name and exactly one configMap or secret source, and
// mounts of declared volumes only.
func (s KubernetesSpec) validateAPIServer(ps *problems) {
	const base = "spec.controlPlane.apiServer"
	a := s.ControlPlane.APIServer
	oidcOn := s.OIDC.On()
	if oidcOn {
		for i, arg := range a.ExtraArgs {
			if strings.HasPrefix(arg, "--oidc-") || strings.HasPrefix(arg, "--authentication-config") {
				flag, _, _ := strings.Cut(arg, "=")
				ps.add(fmt.Sprintf("%s.extraArgs[%d]", base, i), ErrLegacyOIDCFlag, flag)
			}
		}
	}
	reserved := ReservedVolumes()
	if oidcOn {
		reserved = append(reserved, AuthenticationConfigVolume)
	}
	declared := map[string]bool{}
	for i, v := range a.ExtraVolumes {
		f := fmt.Sprintf("%s.extraVolumes[%d]", base, i)
		switch {
		case v.Name == "":
			ps.add(f+".name", ErrVolumeName, "")
		case slices.Contains(reserved, v.Name):
			ps.add(f+".name", ErrReservedVolume, v.Name)
		case declared[v.Name]:
			ps.add(f+".name", ErrDuplicateVolume, v.Name)
		}
		if v.Name != "" && !slices.Contains(reserved, v.Name) {
			declared[v.Name] = true
		}
		if srcs := volumeSources(v.VolumeSource); len(srcs) != 1 || (srcs[0] != "configMap" && srcs[0] != "secret") {
			ps.add(f, ErrVolumeSource, describeSources(srcs))
		}
	}
	for i, m := range a.ExtraVolumeMounts {
		if !declared[m.Name] {
			ps.add(fmt.Sprintf("%s.extraVolumeMounts[%d].name", base, i), ErrUndeclaredVolumeMount, fmt.Sprintf("%q", m.Name))
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

func describeSources(srcs []string) string {
	if len(srcs) == 0 {
		return "no source"
	}
	return "sources " + strings.Join(srcs, ", ")
}
