package extender

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzDecode: the request decoders never panic, and refuse with a
// *RequestError (wrapping ErrBadRequest) or return what the handlers need.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"Pod":{"metadata":{"name":"a","namespace":"ml"}},"NodeNames":["n1","n2"]}`,
		`{"Pod":{"metadata":{"name":"a"}},"Nodes":{"items":[{"metadata":{"name":"n1"}}]}}`,
		`{"PodName":"a","PodNamespace":"ml","PodUID":"u","Node":"n1"}`,
		`{"Pod":null}`, `{`, ``, `[]`, `{"NodeNames":null} x`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		args, names, err := decodeArgs("filter", bytes.NewReader(data), 1<<16)
		if err != nil {
			if !errors.Is(err, ErrBadRequest) {
				t.Fatalf("decodeArgs: %v is not ErrBadRequest", err)
			}
		} else if args.Pod == nil || args.Pod.Name == "" || names == nil && args.NodeNames == nil && args.Nodes == nil {
			t.Fatalf("decodeArgs accepted %q", data)
		}
		b, err := decodeBinding(bytes.NewReader(data), 1<<16)
		if err != nil {
			if !errors.Is(err, ErrBadRequest) {
				t.Fatalf("decodeBinding: %v is not ErrBadRequest", err)
			}
		} else if b.PodName == "" || b.PodNamespace == "" || b.Node == "" {
			t.Fatalf("decodeBinding accepted %q", data)
		}
	})
}
