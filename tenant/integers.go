package tenant

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
)

// integerRanges reports, as K-integer-range problems, the whole numbers
// of raw (a document decoded with integers kept as int64) that sit where
// the Go type t has an integer but do not fit one: beyond int64, such as
// maxReplicas: 9223372036854775808 or controlPlane.replicas: 1e20. The
// chart's schema takes them as integers and Helm renders them as floats
// (9.223372036854776e+18); tenantkit refuses them, as its own rule. It
// returns the JSON of raw without them, for the typed decode, or nil when
// there are none. A fractional number stays where it is: the schema
// refuses it (S-type) and the typed decode says so.
func integerRanges(raw any, t reflect.Type, path string, ps *problems) []byte {
	n := len(*ps)
	walkIntegers(raw, t, path, ps)
	if len(*ps) == n {
		return nil
	}
	out, err := json.Marshal(raw) // raw has lost the offending values
	if err != nil {
		return nil
	}
	return out
}

// walkIntegers walks raw along t, deleting from raw's objects the
// offending numbers it reports.
func walkIntegers(raw any, t reflect.Type, path string, ps *problems) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(jsonUnmarshaler) && t.PkgPath() != modelPkg {
		return
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		obj, _ := raw.(map[string]any)
		fields := map[string]reflect.Type{}
		if t.Kind() == reflect.Struct {
			fields = jsonFields(t)
		}
		for k, v := range obj {
			ft, ok := fields[k]
			if t.Kind() == reflect.Map {
				ft, ok = t.Elem(), true
			}
			if !ok {
				continue
			}
			if beyondInteger(v, ft, joinPath(path, k), ps) {
				delete(obj, k)
				continue
			}
			walkIntegers(v, ft, joinPath(path, k), ps)
		}
	case reflect.Slice, reflect.Array:
		list, _ := raw.([]any)
		for i, v := range list {
			walkIntegers(v, t.Elem(), fmt.Sprintf("%s[%d]", path, i), ps)
		}
	}
}

// beyondInteger reports a whole number v where t is an integer type. The
// document reached here as JSON written by the YAML library, so a whole
// number decoded as float64 (not int64) is one no int64 holds: beyond it,
// or written in a form the typed decode refuses (1e+21).
func beyondInteger(v any, t reflect.Type, path string, ps *problems) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	f, ok := v.(float64)
	if !ok || f != math.Trunc(f) || math.IsInf(f, 0) {
		return false
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
	default:
		return false
	}
	ps.add(path, kIntegerRange, fmt.Sprintf(
		"beyond %d-bit integers: the chart's schema takes it as an integer and Helm renders it as the float %v, which no count in the objects it feeds can take",
		t.Bits(), f))
	return true
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
