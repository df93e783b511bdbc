package tenant

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// ParseKubernetes decodes a Kubernetes application from YAML or JSON that a
// user wrote. It is strict: an unknown or duplicate field is an error (a
// *ValidationError whose entries wrap ErrUnknownField or
// ErrDuplicateField), so a typo never silently disappears. Unknown fields
// under status are ignored, because Cozystack owns the status. Syntax and
// type errors wrap ErrMalformed. Use Validate for the chart's rules, and
// DecodeKubernetes for objects read from the API.
func ParseKubernetes(data []byte) (*Kubernetes, error) {
	var k Kubernetes
	if err := decodeStrict(data, &k, ""); err != nil {
		return nil, err
	}
	return &k, checkKind(k.TypeMeta, KubernetesKind)
}

// DecodeKubernetes decodes a Kubernetes application as the API returns it
// (YAML or JSON). Unlike ParseKubernetes it accepts fields the model does
// not know — a newer Cozystack may have added them — and keeps them with
// the object: UnknownFields lists them, YAML writes them back, and
// Client.ApplyKubernetes preserves them, so a read-modify-write loses
// nothing. Syntax and type errors wrap ErrMalformed; a field set twice is
// still an error (ErrDuplicateField).
func DecodeKubernetes(data []byte) (*Kubernetes, error) {
	var k Kubernetes
	if err := decodeObject(data, &k); err != nil {
		return nil, err
	}
	return &k, checkKind(k.TypeMeta, KubernetesKind)
}

// ParseSpec decodes the values of a Kubernetes application (its spec, or a
// Helm values file of the chart without the platform's _cluster and
// _namespace keys) from YAML or JSON, strictly like ParseKubernetes.
func ParseSpec(data []byte) (KubernetesSpec, error) {
	var s KubernetesSpec
	err := decodeStrict(data, &s, "spec")
	return s, err
}

// ParseTenant decodes a Tenant application from YAML or JSON, strictly like
// ParseKubernetes.
func ParseTenant(data []byte) (*Tenant, error) {
	var t Tenant
	if err := decodeStrict(data, &t, ""); err != nil {
		return nil, err
	}
	return &t, checkKind(t.TypeMeta, TenantKind)
}

// DecodeTenant decodes a Tenant application as the API returns it,
// keeping unknown fields like DecodeKubernetes.
func DecodeTenant(data []byte) (*Tenant, error) {
	var t Tenant
	if err := decodeObject(data, &t); err != nil {
		return nil, err
	}
	return &t, checkKind(t.TypeMeta, TenantKind)
}

func checkKind(tm metav1.TypeMeta, kind string) error {
	if tm.APIVersion != "" && tm.APIVersion != APIVersion || tm.Kind != "" && tm.Kind != kind {
		return fmt.Errorf("%w: got %s %s, want %s %s", ErrMalformed, tm.APIVersion, tm.Kind, APIVersion, kind)
	}
	return nil
}

// YAML encodes k as YAML, omitting unset fields and writing back the
// fields the model does not know (see DecodeKubernetes).
func (k *Kubernetes) YAML() ([]byte, error) { return encodeYAML(k) }

// YAML encodes s as YAML, omitting unset fields.
func (s KubernetesSpec) YAML() ([]byte, error) { return encodeYAML(s) }

// YAML encodes t as YAML, omitting unset fields and writing back the
// fields the model does not know (see DecodeTenant).
func (t *Tenant) YAML() ([]byte, error) { return encodeYAML(t) }

func encodeYAML(v any) ([]byte, error) {
	out, err := yaml.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	return out, nil
}

// decodeStrict converts YAML (or JSON, a subset) to JSON and decodes it
// into v, case-sensitively, refusing unknown and duplicate fields. prefix
// is prepended to field paths ("spec" for a bare spec).
func decodeStrict(data []byte, v any, prefix string) error {
	_, err := decode(data, v, prefix, true)
	return err
}

// decodeObject decodes an object read from the API into v (a *Kubernetes
// or *Tenant), keeping what the model does not know (status aside) in v.
func decodeObject(data []byte, v interface{ setUnknown(*unknownFields) }) error {
	j, err := decode(data, v, "", false)
	if err != nil {
		return err
	}
	var raw any
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(j, &raw); err != nil {
		return fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	u := findUnknown(raw, reflect.TypeOf(v))
	if u != nil {
		delete(u.fields, "status")
		delete(u.nested, "status")
		if len(u.fields) == 0 && len(u.nested) == 0 {
			u = nil
		}
	}
	v.setUnknown(u)
	return nil
}

// decode converts YAML (or JSON) to JSON and decodes it into v. Duplicate
// fields are always refused; unknown fields only when strict. It returns
// the JSON.
func decode(data []byte, v any, prefix string, strict bool) ([]byte, error) {
	j, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		if strings.Contains(err.Error(), "already set in map") {
			return nil, &ValidationError{Errors: []*FieldError{{Field: "(document)", Err: ErrDuplicateField, Detail: yamlDetail(err)}}}
		}
		return nil, fmt.Errorf("%w: %s", ErrMalformed, yamlDetail(err))
	}
	strictErrs, err := sigsjson.UnmarshalStrict(j, v)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", ErrMalformed, strings.TrimPrefix(err.Error(), "json: "))
	}
	normalize(reflect.ValueOf(v))
	var ps problems
	for _, se := range strictErrs {
		var fe sigsjson.FieldError
		if !errors.As(se, &fe) {
			return nil, fmt.Errorf("%w: %v", ErrMalformed, se)
		}
		path := fe.FieldPath()
		if prefix != "" {
			path = prefix + "." + path
		}
		if path == "status" || strings.HasPrefix(path, "status.") || strings.HasPrefix(path, "status[") {
			continue
		}
		sentinel := ErrUnknownField
		if strings.HasPrefix(se.Error(), "duplicate field") {
			sentinel = ErrDuplicateField
		} else if !strict {
			continue
		}
		ps.add(path, sentinel, "")
	}
	return j, ps.err()
}

// yamlDetail shortens a YAML library error to its message.
func yamlDetail(err error) string {
	msg := err.Error()
	for _, p := range []string{"error converting YAML to JSON: ", "yaml: "} {
		msg = strings.TrimPrefix(msg, p)
	}
	return msg
}

// normalize turns empty slices and maps of the typed model into nil, so
// that "extraArgs: []" and an absent extraArgs decode alike and encoding is
// a fixed point. It does not look inside free-form values (map[string]any).
func normalize(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			normalize(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() {
				normalize(f)
			}
		}
	case reflect.Slice:
		if v.Len() == 0 {
			if !v.IsNil() && v.CanSet() {
				v.SetZero()
			}
			return
		}
		for i := range v.Len() {
			normalize(v.Index(i))
		}
	case reflect.Map:
		if v.Len() == 0 {
			if !v.IsNil() && v.CanSet() {
				v.SetZero()
			}
			return
		}
		if k := v.Type().Elem().Kind(); k != reflect.Struct && k != reflect.Pointer {
			return
		}
		for _, key := range v.MapKeys() {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(v.MapIndex(key))
			normalize(e)
			v.SetMapIndex(key, e)
		}
	}
}
