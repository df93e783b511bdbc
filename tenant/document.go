package tenant

import (
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

// checkDocument reports what only the document of a spec shows, not the
// typed values: keys the schema requires that are missing or null, a ""
// where only an absent key means the default, and quantities given as
// fractional numbers. raw is the spec decoded as JSON (integers as int64);
// path is its field path ("spec"). The rules come from the chart struct
// tags of the model (see KubernetesSpec).
func checkDocument(raw any, path string, ps *problems) {
	walkDocument(raw, reflect.TypeFor[KubernetesSpec](), path, true, ps)
}

var (
	quantityType = reflect.TypeFor[resource.Quantity]()
	modelPkg     = reflect.TypeFor[KubernetesSpec]().PkgPath()
)

// walkDocument checks raw against t, one of the model's types. defaults
// says whether the chart's values.yaml holds raw's keys (Helm deletes an
// explicit null there; elsewhere the schema sees it).
func walkDocument(raw any, t reflect.Type, path string, defaults bool, ps *problems) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		if obj, ok := raw.(map[string]any); ok && t.PkgPath() == modelPkg {
			walkStruct(obj, t, path, defaults, ps)
		}
	case reflect.Map:
		if obj, ok := raw.(map[string]any); ok && t.Key().Kind() == reflect.String {
			for _, k := range slices.Sorted(maps.Keys(obj)) {
				walkElement(obj[k], t.Elem(), path+"."+k, ps)
			}
		}
	case reflect.Slice:
		if list, ok := raw.([]any); ok {
			for i, v := range list {
				walkElement(v, t.Elem(), path+"["+strconv.Itoa(i)+"]", ps)
			}
		}
	}
}

// walkElement checks a map value or list item: the schema types them
// (objects for the model's structs), so null is not one.
func walkElement(raw any, t reflect.Type, path string, ps *problems) {
	et := t
	for et.Kind() == reflect.Pointer {
		et = et.Elem()
	}
	if raw == nil && et.Kind() == reflect.Struct && et.PkgPath() == modelPkg {
		ps.add(path, sType, "null where the schema wants an object")
		return
	}
	walkDocument(raw, t, path, false, ps)
}

// walkStruct checks the fields of one object of type t.
func walkStruct(obj map[string]any, t reflect.Type, path string, defaults bool, ps *problems) {
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		field := path + "." + name
		tag := parseChartTag(f.Tag.Get("chart"))
		fieldDefaults := defaults && !tag.nodefault
		v, present := obj[name]
		switch {
		case !present:
			if tag.missing != noRule {
				ps.addAs(field, tag.missing, ErrRequiredField, "the schema requires it and nothing supplies a default")
			}
		case v == nil:
			switch {
			case !fieldDefaults:
				ps.addAs(field, sType, ErrNullValue, "the chart has no default for Helm to delete the key from, so the schema sees null, not "+schemaType(f.Type))
			case tag.null == tSectionNull:
				ps.addAs(field, tag.null, ErrNullValue, "Helm deletes the section and the chart's templates fail on it: nil pointer evaluating "+strings.TrimPrefix(field, "spec."))
			case tag.null != noRule:
				ps.addAs(field, tag.null, ErrNullValue, "Helm deletes the key and the chart has no value to render")
			case tag.required:
				ps.add(field, sNullRequired, "Helm deletes the key, which the schema requires")
			}
		case v == "" && tag.empty != noRule:
			ps.addFE(emptyProblem(tag.empty, field))
		case tag.opaque:
		default:
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft == quantityType {
				if n, ok := v.(float64); ok && n != math.Trunc(n) {
					ps.add(field, sQuantity, "a quantity is an integer or a string, not "+strconv.FormatFloat(n, 'g', -1, 64))
				}
				continue
			}
			walkDocument(v, f.Type, field, fieldDefaults, ps)
		}
	}
}

// schemaType names the JSON type the schema gives a field of Go type t.
func schemaType(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == quantityType:
		return "a quantity"
	case t.Kind() == reflect.String:
		return "a string"
	case t.Kind() == reflect.Bool:
		return "a boolean"
	case t.Kind() == reflect.Int, t.Kind() == reflect.Int64:
		return "an integer"
	case t.Kind() == reflect.Slice:
		return "an array"
	}
	return "an object"
}

// chartTag is a parsed chart struct tag: the rules it names (missing=,
// null=, empty=; IDs of ruleTable) are noRule where it names none.
type chartTag struct {
	required, opaque     bool
	nodefault            bool
	missing, null, empty ruleID
}

func parseChartTag(tag string) chartTag {
	ct := chartTag{missing: noRule, null: noRule, empty: noRule}
	for _, part := range strings.Split(tag, ",") {
		k, v, _ := strings.Cut(part, "=")
		switch k {
		case "required":
			ct.required = true
		case "opaque":
			ct.opaque = true
		case "nodefault":
			ct.nodefault = true
		case "missing":
			ct.missing = ruleByID(v)
		case "null":
			ct.null = ruleByID(v)
		case "empty":
			ct.empty = ruleByID(v)
		}
	}
	return ct
}

// emptyProblem is the refusal of a present "" by rule r.
func emptyProblem(r ruleID, field string) *FieldError {
	switch r {
	case tMaxUnhealthyFormat:
		return maxUnhealthyProblem(field, "")
	case tDurationPositive:
		return durationProblem(field, "")
	}
	return problem(field, r, `"" is not in the schema's enum; only an absent key means the default`)
}
