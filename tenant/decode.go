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
// user wrote, and checks what only the document shows, as the chart and
// Helm see it: a key every node group requires that is missing
// (ErrRequiredField), an explicit null where Helm's deletion of the key
// breaks the chart (ErrNullValue), "" where only an absent key means the
// default (ErrInvalidValue, ErrMaxUnhealthy, ErrDuration), a fractional
// number as a quantity (ErrMalformed), and a whole number beyond int64
// where the model has an integer (ErrIntegerRange, tenantkit's own rule:
// the chart takes it and Helm renders a float). The errors are a
// *ValidationError. Syntax and type errors wrap ErrMalformed. The document is read as Helm
// reads values: a field set twice keeps its last value (Check warns,
// ErrDuplicateField), a merge key yields to the keys beside it. Fields the
// model does not know are kept (the chart's schema allows them): Check
// warns of them and YAML writes them back.
// Use Check for the chart's rules on the values.
func ParseKubernetes(data []byte) (*Kubernetes, error) {
	var k Kubernetes
	var ps problems
	raw, err := decode(data, &k, "", false, &ps)
	if err != nil {
		return nil, err
	}
	k.setUnknown(unknownOf(raw, &k))
	if err := checkKind(k.TypeMeta, KubernetesKind); err != nil {
		return nil, err
	}
	spec := specOf(raw)
	keepFalsyResources(spec, &k.Spec)
	keepNullVolumeSources(spec, &k.Spec)
	checkDocument(spec, "spec", &ps)
	k.doc = newDocFacts(data, "", "spec", &ps)
	if err := ps.err(); err != nil {
		return nil, err
	}
	return &k, nil
}

// DecodeKubernetes decodes a Kubernetes application as the API returns it
// (YAML or JSON). Like ParseKubernetes it keeps the fields the model does
// not know — a newer Cozystack may have added them — so that a
// read-modify-write loses nothing (UnknownFields lists them, YAML writes
// them back, Client.ApplyKubernetes preserves them). Unlike
// ParseKubernetes it does not check the document: what is stored is read.
// Syntax and type errors wrap ErrMalformed, and a whole number the model
// cannot hold is ErrIntegerRange (a *ValidationError); a field set twice
// keeps its last value, as in Helm.
func DecodeKubernetes(data []byte) (*Kubernetes, error) {
	var k Kubernetes
	var ps problems
	raw, err := decode(data, &k, "", false, &ps)
	if err != nil {
		return nil, err
	}
	if err := ps.err(); err != nil {
		return nil, err
	}
	k.setUnknown(unknownOf(raw, &k))
	keepFalsyResources(specOf(raw), &k.Spec)
	keepNullVolumeSources(specOf(raw), &k.Spec)
	return &k, checkKind(k.TypeMeta, KubernetesKind)
}

// ParseSpec decodes the values of a Kubernetes application (its spec, or a
// Helm values file of the chart without the platform's _cluster and
// _namespace keys) from YAML or JSON, and checks the document like
// ParseKubernetes. The spec is returned with the error too.
func ParseSpec(data []byte) (KubernetesSpec, error) {
	var s KubernetesSpec
	var ps problems
	raw, err := decode(data, &s, "spec", false, &ps)
	if err != nil {
		return s, err
	}
	s.unknown = findUnknown(raw, reflect.TypeFor[KubernetesSpec]())
	keepFalsyResources(raw, &s)
	keepNullVolumeSources(raw, &s)
	checkDocument(raw, "spec", &ps)
	s.doc = newDocFacts(data, "spec", "spec", &ps)
	return s, ps.err()
}

// ParseTenant decodes a Tenant application from YAML or JSON. It is
// strict: an unknown field is an error (a *ValidationError whose entries
// wrap ErrUnknownField), so a typo never silently disappears; unknown
// fields under status are ignored. Syntax and type errors wrap
// ErrMalformed.
func ParseTenant(data []byte) (*Tenant, error) {
	var t Tenant
	var ps problems
	if _, err := decode(data, &t, "", true, &ps); err != nil {
		return nil, err
	}
	if err := ps.err(); err != nil {
		return nil, err
	}
	return &t, checkKind(t.TypeMeta, TenantKind)
}

// DecodeTenant decodes a Tenant application as the API returns it,
// keeping unknown fields like DecodeKubernetes.
func DecodeTenant(data []byte) (*Tenant, error) {
	var t Tenant
	var ps problems
	raw, err := decode(data, &t, "", false, &ps)
	if err != nil {
		return nil, err
	}
	if err := ps.err(); err != nil {
		return nil, err
	}
	t.setUnknown(unknownOf(raw, &t))
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

// YAML encodes s as YAML, omitting unset fields, writing the four keys
// every node group requires, and writing back the fields the model does
// not know.
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

// unknownOf returns what v's type does not model in raw, status aside
// (Cozystack owns the status).
func unknownOf(raw any, v any) *unknownFields {
	u := findUnknown(raw, reflect.TypeOf(v))
	if u != nil {
		delete(u.fields, "status")
		delete(u.nested, "status")
		if len(u.fields) == 0 && len(u.nested) == 0 {
			u = nil
		}
	}
	return u
}

// specOf returns the spec of a decoded object, or nil.
func specOf(raw any) any {
	obj, _ := raw.(map[string]any)
	return obj["spec"]
}

// keepFalsyResources unsets a node group's resources.cpu or .memory that
// the document gives as the number 0: the chart's templates read it as
// false, the same as absent. (The string "0" is a value.)
func keepFalsyResources(rawSpec any, s *KubernetesSpec) {
	spec, _ := rawSpec.(map[string]any)
	groups, _ := spec["nodeGroups"].(map[string]any)
	for name, g := range s.NodeGroups {
		obj, _ := groups[name].(map[string]any)
		res, _ := obj["resources"].(map[string]any)
		if isNumberZero(res["cpu"]) {
			g.Resources.CPU = nil
		}
		if isNumberZero(res["memory"]) {
			g.Resources.Memory = nil
		}
		s.NodeGroups[name] = g
	}
}

// keepNullVolumeSources gives an extra volume the source its document
// names with null (secret: null): the chart counts the key as the volume's
// source, as it counts every key besides name, so the volume is read as
// that source, empty, and written back as {}.
func keepNullVolumeSources(rawSpec any, s *KubernetesSpec) {
	spec, _ := rawSpec.(map[string]any)
	cp, _ := spec["controlPlane"].(map[string]any)
	api, _ := cp["apiServer"].(map[string]any)
	list, _ := api["extraVolumes"].([]any)
	for i, item := range list {
		obj, _ := item.(map[string]any)
		if i >= len(s.ControlPlane.APIServer.ExtraVolumes) {
			return
		}
		vs := reflect.ValueOf(&s.ControlPlane.APIServer.ExtraVolumes[i].VolumeSource).Elem()
		for j := range vs.NumField() {
			name, _, _ := strings.Cut(vs.Type().Field(j).Tag.Get("json"), ",")
			if v, ok := obj[name]; ok && v == nil && vs.Field(j).Kind() == reflect.Pointer && vs.Field(j).IsNil() {
				vs.Field(j).Set(reflect.New(vs.Field(j).Type().Elem()))
			}
		}
	}
}

func isNumberZero(v any) bool {
	switch n := v.(type) {
	case int64:
		return n == 0
	case float64:
		return n == 0
	}
	return false
}

// decode converts YAML (or JSON) to JSON and decodes it into v. When
// strict, duplicate and unknown fields are refused (prefix is prepended to
// their paths); otherwise the document is read as Helm reads values (the
// same YAML library, not strict): a key set twice keeps its last value and
// a merge key's mapping yields to the keys beside it. It returns the
// document as decoded JSON, with integers as int64. Whole numbers beyond
// the integer fields they sit in are added to ps (K-integer-range, see
// integerRanges) and left out of v.
func decode(data []byte, v any, prefix string, strict bool, ps *problems) (any, error) {
	toJSON := yaml.YAMLToJSON
	if strict {
		toJSON = yaml.YAMLToJSONStrict
	}
	j, err := toJSON(data)
	if err != nil {
		if strings.Contains(err.Error(), "already set in map") {
			return nil, &ValidationError{Errors: []*FieldError{{Field: "(document)", Err: ErrDuplicateField, Detail: yamlDetail(err)}}}
		}
		return nil, fmt.Errorf("%w: %s", ErrMalformed, yamlDetail(err))
	}
	var raw, scratch any
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(j, &raw); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(j, &scratch); err == nil {
		if fitting := integerRanges(scratch, reflect.TypeOf(v), prefix, ps); fitting != nil {
			j = fitting
		}
	}
	strictErrs, err := sigsjson.UnmarshalStrict(j, v)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", ErrMalformed, strings.TrimPrefix(err.Error(), "json: "))
	}
	normalize(reflect.ValueOf(v))
	var dup problems
	for _, se := range strictErrs {
		var fe sigsjson.FieldError
		if !errors.As(se, &fe) {
			return nil, fmt.Errorf("%w: %w", ErrMalformed, se)
		}
		path := fe.FieldPath()
		if prefix != "" {
			path = prefix + "." + path
		}
		if path == "status" || strings.HasPrefix(path, "status.") || strings.HasPrefix(path, "status[") {
			continue
		}
		switch {
		case strings.HasPrefix(se.Error(), "duplicate field"):
			dup.addFE(&FieldError{Field: path, Err: ErrDuplicateField})
		case strict:
			dup.addFE(&FieldError{Field: path, Err: ErrUnknownField})
		}
	}
	if err := dup.err(); err != nil {
		return nil, err
	}
	return raw, nil
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
