package agents

import (
	"context"
	"log/slog"
)

// boundedHandler cuts long string attributes. acp-go-sdk logs a whole unparsable stdout line (up to 10 MiB)
// as an attribute; an agent printing junk must not flood the gateway's log.
type boundedHandler struct {
	slog.Handler
	max int
}

func boundLogger(l *slog.Logger, max int) *slog.Logger {
	return slog.New(&boundedHandler{Handler: l.Handler(), max: max})
}

func (h *boundedHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, r.Message, r.PC)
	r.Attrs(func(a slog.Attr) bool {
		if a.Value.Kind() == slog.KindString && len(a.Value.String()) > h.max {
			s := a.Value.String()
			a = slog.String(a.Key, s[:h.max]+"…(cut)")
		}
		out.AddAttrs(a)
		return true
	})
	return h.Handler.Handle(ctx, out)
}

func (h *boundedHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &boundedHandler{Handler: h.Handler.WithAttrs(as), max: h.max}
}

func (h *boundedHandler) WithGroup(name string) slog.Handler {
	return &boundedHandler{Handler: h.Handler.WithGroup(name), max: h.max}
}
