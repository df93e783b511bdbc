package extender

import (
	"encoding/json"
	"errors"
	"io"

	extenderv1 "k8s.io/kube-scheduler/extender/v1"
)

// decodeJSON reads one JSON value of at most limit bytes from r into v and
// refuses anything after it.
func decodeJSON(verb string, r io.Reader, limit int64, v any) error {
	lr := &io.LimitedReader{R: r, N: limit + 1}
	dec := json.NewDecoder(lr)
	if err := dec.Decode(v); err != nil {
		if lr.N <= 0 {
			return &RequestError{Verb: verb, Reason: "body over the size limit"}
		}
		if errors.Is(err, io.EOF) {
			return &RequestError{Verb: verb, Reason: "empty body"}
		}
		return &RequestError{Verb: verb, Reason: "decode", Err: err}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		if lr.N <= 0 {
			return &RequestError{Verb: verb, Reason: "body over the size limit"}
		}
		return &RequestError{Verb: verb, Reason: "data after the JSON value"}
	}
	return nil
}

// decodeArgs reads the ExtenderArgs of a filter or prioritize call and
// returns the pod and the candidate node names: NodeNames when
// kube-scheduler caches nodes (nodeCacheCapable), else Nodes' names.
func decodeArgs(verb string, r io.Reader, limit int64) (*extenderv1.ExtenderArgs, []string, error) {
	var args extenderv1.ExtenderArgs
	if err := decodeJSON(verb, r, limit, &args); err != nil {
		return nil, nil, err
	}
	if args.Pod == nil {
		return nil, nil, &RequestError{Verb: verb, Reason: "no Pod"}
	}
	if args.Pod.Name == "" {
		return nil, nil, &RequestError{Verb: verb, Reason: "Pod without a name"}
	}
	switch {
	case args.NodeNames != nil:
		return &args, *args.NodeNames, nil
	case args.Nodes != nil:
		names := make([]string, len(args.Nodes.Items))
		for i := range args.Nodes.Items {
			names[i] = args.Nodes.Items[i].Name
		}
		return &args, names, nil
	}
	return nil, nil, &RequestError{Verb: verb, Reason: "neither NodeNames nor Nodes"}
}

// decodeBinding reads the ExtenderBindingArgs of a bind call.
func decodeBinding(r io.Reader, limit int64) (*extenderv1.ExtenderBindingArgs, error) {
	var args extenderv1.ExtenderBindingArgs
	if err := decodeJSON("bind", r, limit, &args); err != nil {
		return nil, err
	}
	switch {
	case args.PodName == "":
		return nil, &RequestError{Verb: "bind", Reason: "no PodName"}
	case args.PodNamespace == "":
		return nil, &RequestError{Verb: "bind", Reason: "no PodNamespace"}
	case args.Node == "":
		return nil, &RequestError{Verb: "bind", Reason: "no Node"}
	}
	return &args, nil
}
