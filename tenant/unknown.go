package tenant

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	sigsjson "sigs.k8s.io/json"
)

// unknownFields holds the parts of a document the model has no field for,
// so that they can be written back: Cozystack may add fields to its
// applications before tenantkit learns them, and a read-modify-write must
// not drop them.
//
// fields are unknown keys with their whole values; nested are known keys
// (struct fields, map entries) whose values hold unknown fields deeper
// down; items are such list elements, by index, with the element's
// identity (its "name" or "email") when it has one.
type unknownFields struct {
	fields map[string]any
	nested map[string]*unknownFields
	items  map[int]*unknownItem
	// field is set when this is the value of a struct field: an empty
	// struct is omitted on encode, so merging recreates it.
	field bool
}

type unknownItem struct {
	key string // the identity key of the element type: "name", "email" or ""
	id  string // "name=x" or "email=y"; "" when the element has none
	*unknownFields
}

var jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()

// findUnknown walks the decoded JSON value raw along the Go type t and
// returns what t has no field for, or nil if t models all of it. Types
// that decode themselves (quantities, times) and free-form values
// (map[string]any) are taken as fully known.
func findUnknown(raw any, t reflect.Type) *unknownFields {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(jsonUnmarshaler) && t.PkgPath() != modelPkg {
		return nil
	}
	u := &unknownFields{}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := raw.(map[string]any)
		if !ok {
			return nil
		}
		fields := jsonFields(t)
		for k, v := range obj {
			ft, known := fields[k]
			if !known {
				u.addField(k, v)
			} else if sub := findUnknown(v, ft); sub != nil {
				sub.field = true
				u.addNested(k, sub)
			}
		}
	case reflect.Map:
		obj, ok := raw.(map[string]any)
		if !ok {
			return nil
		}
		for k, v := range obj {
			if sub := findUnknown(v, t.Elem()); sub != nil {
				u.addNested(k, sub)
			}
		}
	case reflect.Slice, reflect.Array:
		list, ok := raw.([]any)
		if !ok {
			return nil
		}
		key := identityKey(t.Elem())
		for i, v := range list {
			if sub := findUnknown(v, t.Elem()); sub != nil {
				if u.items == nil {
					u.items = map[int]*unknownItem{}
				}
				u.items[i] = &unknownItem{key: key, id: identity(v, key), unknownFields: sub}
			}
		}
	}
	if u.fields == nil && u.nested == nil && u.items == nil {
		return nil
	}
	return u
}

func (u *unknownFields) addField(k string, v any) {
	if u.fields == nil {
		u.fields = map[string]any{}
	}
	u.fields[k] = v
}

func (u *unknownFields) addNested(k string, sub *unknownFields) {
	if u.nested == nil {
		u.nested = map[string]*unknownFields{}
	}
	u.nested[k] = sub
}

// jsonFields maps the JSON names of struct t's fields (inlined embedded
// structs included, as encoding/json does) to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for f := range t.Fields() {
		tag := f.Tag.Get("json")
		if tag == "-" || !f.IsExported() && !f.Anonymous {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := f.Type
		if f.Anonymous && name == "" {
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				maps.Copy(out, jsonFields(ft))
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		out[name] = ft
	}
	return out
}

// identityKey returns the field that names elements of type t, "name" or
// "email", so that unknown fields follow their element when the caller
// reorders or removes others; "" when t models neither. Only a modelled
// field counts: an unknown "name" on a user is not its identity.
func identityKey(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return ""
	}
	fields := jsonFields(t)
	for _, k := range []string{"name", "email"} {
		if ft, ok := fields[k]; ok && ft.Kind() == reflect.String {
			return k
		}
	}
	return ""
}

// identity names a list element by its key field ("name=x").
func identity(v any, key string) string {
	obj, ok := v.(map[string]any)
	if !ok || key == "" {
		return ""
	}
	if s, ok := obj[key].(string); ok && s != "" {
		return key + "=" + s
	}
	return ""
}

// mergeInto writes the unknown fields back into dst, the encoding of the
// model. An unknown key is restored only where its parent still exists in
// dst (or is a struct, which always exists): a node group, volume or user
// the caller removed takes its unknown fields with it. Known keys in dst
// are never overwritten.
func (u *unknownFields) mergeInto(dst map[string]any) {
	if u == nil || dst == nil {
		return
	}
	for k, v := range u.fields {
		if _, set := dst[k]; !set {
			dst[k] = deepCopyJSON(v)
		}
	}
	for k, sub := range u.nested {
		switch d := dst[k].(type) {
		case map[string]any:
			sub.mergeInto(d)
		case []any:
			sub.mergeItems(d)
		case nil:
			if _, set := dst[k]; !set && sub.field && sub.items == nil {
				m := map[string]any{}
				sub.mergeInto(m)
				dst[k] = m
			}
		}
	}
}

// mergeItems merges unknown fields of list elements into dst: into the
// element at the same position if it has the same identity ("name" or
// "email", or none), else into the element with that identity.
func (u *unknownFields) mergeItems(dst []any) {
	for i, item := range u.items {
		j := -1
		if i < len(dst) && identity(dst[i], item.key) == item.id {
			j = i
		} else if item.id != "" {
			j = slices.IndexFunc(dst, func(e any) bool { return identity(e, item.key) == item.id })
		}
		if j < 0 {
			continue
		}
		if d, ok := dst[j].(map[string]any); ok {
			item.mergeInto(d)
		}
	}
}

// paths lists the unknown fields as field paths under prefix, sorted:
// "spec.futureField", "spec.nodeGroups.md0.x", "spec.oidc.users[1].groups".
func (u *unknownFields) paths(prefix string) []string {
	if u == nil {
		return nil
	}
	join := func(k string) string {
		if prefix == "" {
			return k
		}
		return prefix + "." + k
	}
	var out []string
	for k := range u.fields {
		out = append(out, join(k))
	}
	for k, sub := range u.nested {
		out = append(out, sub.paths(join(k))...)
	}
	for i, item := range u.items {
		out = append(out, item.paths(prefix+"["+strconv.Itoa(i)+"]")...)
	}
	slices.Sort(out)
	return out
}

// child returns the unknown fields under key k, or nil.
func (u *unknownFields) child(k string) *unknownFields {
	if u == nil {
		return nil
	}
	return u.nested[k]
}

// children returns the known keys holding unknown fields deeper down.
func (u *unknownFields) children() map[string]*unknownFields {
	if u == nil {
		return nil
	}
	return u.nested
}

// keys returns the unknown keys at this level with their values.
func (u *unknownFields) keys() map[string]any {
	if u == nil {
		return nil
	}
	return u.fields
}

// itemsByIndex returns the list elements holding unknown fields, by their
// index in the decoded document.
func (u *unknownFields) itemsByIndex() map[int]*unknownFields {
	if u == nil {
		return nil
	}
	out := make(map[int]*unknownFields, len(u.items))
	for i, item := range u.items {
		out[i] = item.unknownFields
	}
	return out
}

// itemFor returns the unknown fields of the list element now at index i
// named name, matched as mergeItems matches: same position and identity,
// else the element of that name.
func (u *unknownFields) itemFor(i int, name string) *unknownFields {
	if u == nil {
		return nil
	}
	id := identity(map[string]any{"name": name}, "name")
	if item, ok := u.items[i]; ok && item.id == id {
		return item.unknownFields
	}
	if id == "" {
		return nil
	}
	for _, item := range u.items {
		if item.id == id {
			return item.unknownFields
		}
	}
	return nil
}

// withUnknown encodes v (a model value) to JSON with u merged back in.
func withUnknown(v any, u *unknownFields) ([]byte, error) {
	data, err := json.Marshal(v)
	if err != nil || u == nil {
		return data, err
	}
	var m map[string]any
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(data, &m); err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	u.mergeInto(m)
	return json.Marshal(m)
}

// deepCopyJSON copies a decoded JSON value so that merged documents share
// nothing with the object they were read from.
func deepCopyJSON(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = deepCopyJSON(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = deepCopyJSON(e)
		}
		return out
	}
	return v
}

// UnknownFields lists the fields of k that the model does not know, as
// field paths ("spec.addons.newAddon"), sorted. Objects from a decoder or
// the Client keep them and write them back.
func (k *Kubernetes) UnknownFields() []string {
	out := append(k.unknown.paths(""), k.Spec.unknown.paths("spec")...)
	slices.Sort(out)
	return slices.Compact(out)
}

// UnknownFields lists the fields of s that the model does not know, as
// field paths ("spec.addons.newAddon"), sorted. A spec from ParseSpec or
// a decoded object keeps them and writes them back.
func (s KubernetesSpec) UnknownFields() []string { return s.unknown.paths("spec") }

// MarshalJSON encodes s with its unknown fields written back.
func (s KubernetesSpec) MarshalJSON() ([]byte, error) {
	type plain KubernetesSpec
	return withUnknown(plain(s), s.unknown)
}

// MarshalJSON encodes k with its unknown fields written back.
func (k Kubernetes) MarshalJSON() ([]byte, error) {
	type plain Kubernetes
	return withUnknown(plain(k), k.unknown)
}

// setUnknown keeps u with the object, what lies under spec included: the
// object's unknown fields stay with it when the caller replaces its Spec
// (Client.ApplyKubernetes writes a new spec over a stored object so).
func (k *Kubernetes) setUnknown(u *unknownFields) { k.unknown = u }

// specUnknown returns the unknown fields of k's spec: those the Spec value
// carries (from ParseSpec), else those read with the object.
func (k *Kubernetes) specUnknown() *unknownFields {
	if k.Spec.unknown != nil {
		return k.Spec.unknown
	}
	return k.unknown.child("spec")
}

// UnknownFields lists the fields of t that the model does not know (see
// Kubernetes.UnknownFields).
func (t *Tenant) UnknownFields() []string { return t.unknown.paths("") }

// MarshalJSON encodes t with its unknown fields written back.
func (t Tenant) MarshalJSON() ([]byte, error) {
	type plain Tenant
	return withUnknown(plain(t), t.unknown)
}

func (t *Tenant) setUnknown(u *unknownFields) { t.unknown = u }
