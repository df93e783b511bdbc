package gpushare

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Selectors are a pod's GPU constraints from its annotations.
type Selectors struct {
	// UseTypes: the GPU type must contain one entry (case-insensitive).
	UseTypes []string
	// NoUseTypes: the GPU type must contain no entry.
	NoUseTypes []string
	// UseUUIDs: the GPU UUID must be one of these.
	UseUUIDs []string
	// NoUseUUIDs: the GPU UUID must not be one of these.
	NoUseUUIDs []string
	// Mode, when set, must contain the GPU's mode (nvidia.com/vgpu-mode).
	Mode string
	// NUMABind keeps all GPUs of one container on one NUMA node.
	NUMABind bool
}

// DecodeSelectors reads the selection annotations (nvidia.com/use-gputype,
// nouse-gputype, use-gpuuuid, nouse-gpuuuid, vgpu-mode, numa-bind) from a
// pod's annotations. As in HAMi v2.10, list entries are trimmed and an empty
// list means no constraint. A numa-bind that is not a bool, or an empty
// vgpu-mode (which would match no GPU), is an *AnnotationError.
func DecodeSelectors(annotations map[string]string) (Selectors, error) {
	s := Selectors{
		UseTypes:   splitList(annotations[AnnotationUseGPUType]),
		NoUseTypes: splitList(annotations[AnnotationNoUseGPUType]),
		UseUUIDs:   splitList(annotations[AnnotationUseGPUUUID]),
		NoUseUUIDs: splitList(annotations[AnnotationNoUseGPUUUID]),
	}
	if v, ok := annotations[AnnotationVGPUMode]; ok {
		if strings.TrimSpace(v) == "" {
			return Selectors{}, &AnnotationError{Key: AnnotationVGPUMode, Value: v, Reason: "empty mode matches no GPU"}
		}
		s.Mode = v
	}
	if v, ok := annotations[AnnotationNUMABind]; ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return Selectors{}, &AnnotationError{Key: AnnotationNUMABind, Value: v, Reason: "not a bool"}
		}
		s.NUMABind = b
	}
	return s, nil
}

func splitList(v string) []string {
	var out []string
	for e := range strings.SplitSeq(v, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}

// typeAllowed applies UseTypes, NoUseTypes and Mode; it returns "" or why
// not.
func (s *Selectors) typeAllowed(d *Device) string {
	if len(s.UseTypes) > 0 && !containsFold(d.Type, s.UseTypes) {
		return fmt.Sprintf("type %s not in %s=%s", d.Type, AnnotationUseGPUType, strings.Join(s.UseTypes, ","))
	}
	if len(s.NoUseTypes) > 0 && containsFold(d.Type, s.NoUseTypes) {
		return fmt.Sprintf("type %s excluded by %s=%s", d.Type, AnnotationNoUseGPUType, strings.Join(s.NoUseTypes, ","))
	}
	if s.Mode != "" && !strings.Contains(s.Mode, d.Mode) {
		return fmt.Sprintf("mode %s not allowed by %s=%s", d.Mode, AnnotationVGPUMode, s.Mode)
	}
	return ""
}

// uuidAllowed applies UseUUIDs and NoUseUUIDs.
func (s *Selectors) uuidAllowed(id string) string {
	if len(s.UseUUIDs) > 0 && !slices.Contains(s.UseUUIDs, id) {
		return "not in " + AnnotationUseGPUUUID
	}
	if len(s.NoUseUUIDs) > 0 && slices.Contains(s.NoUseUUIDs, id) {
		return "excluded by " + AnnotationNoUseGPUUUID
	}
	return ""
}

func containsFold(s string, subs []string) bool {
	u := strings.ToUpper(s)
	for _, sub := range subs {
		if strings.Contains(u, strings.ToUpper(sub)) {
			return true
		}
	}
	return false
}
