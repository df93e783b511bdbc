package etcdrelocate_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"testing"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/cozystack/tenantkit/etcdrelocate"
)

// testLogger logs through t.Log at info level.
func testLogger(t testing.TB) *slog.Logger {
	return slog.New(&tHandler{t: t})
}

type tHandler struct {
	t     testing.TB
	attrs []slog.Attr
}

func (h *tHandler) Enabled(_ context.Context, l slog.Level) bool {
	if os.Getenv("TENANTKIT_DEBUG") != "" {
		return true
	}
	return l >= slog.LevelInfo
}

func (h *tHandler) Handle(_ context.Context, r slog.Record) error {
	msg := r.Level.String() + " " + r.Message
	for _, a := range h.attrs {
		msg += " " + a.String()
	}
	r.Attrs(func(a slog.Attr) bool { msg += " " + a.String(); return true })
	h.t.Log(msg)
	return nil
}

func (h *tHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &tHandler{t: h.t, attrs: append(append([]slog.Attr(nil), h.attrs...), as...)}
}

func (h *tHandler) WithGroup(string) slog.Handler { return h }

// tailFile returns a file's content, "" if it cannot be read.
func tailFile(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return string(data)
}

func errorsIs(err, target error) bool { return errors.Is(err, target) }

const pbNOSPACE = pb.AlarmType_NOSPACE

var (
	schemaEtcdCluster = schema.GroupVersionResource{Group: etcdrelocate.GroupCozystack, Version: "v1alpha2", Resource: "etcdclusters"}
	schemaEtcdMember  = schema.GroupVersionResource{Group: etcdrelocate.GroupCozystack, Version: "v1alpha2", Resource: "etcdmembers"}
)

// unstructuredAffinity returns spec.affinity and whether it has a required
// node affinity.
func unstructuredAffinity(obj map[string]any) (map[string]any, bool, error) {
	aff, _, err := unstructured.NestedMap(obj, "spec", "affinity")
	if err != nil {
		return nil, false, err
	}
	_, pinned, err := unstructured.NestedMap(aff, "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution")
	return aff, pinned, err
}
