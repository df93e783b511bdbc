package etcdrelocate_test

import (
	"context"
	"log/slog"
	"testing"
)

// testLogger logs through t.Log at info level.
func testLogger(t *testing.T) *slog.Logger {
	return slog.New(&tHandler{t: t})
}

type tHandler struct {
	t     *testing.T
	attrs []slog.Attr
}

func (h *tHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }

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
