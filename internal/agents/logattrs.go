package agents

import (
	"context"
	"log/slog"
)

// boundedHandler cuts long string attributes. acp-go-sdk logs a whole unparsable stdout line (up to 10 MiB)
// as an attribute; an agent printing junk must not flood the gateway's log. Secrets (Options.Secrets) in
// them are scrubbed first.
type boundedHandler struct {
	slog.Handler
	max     int
	secrets []string
}

func boundLogger(l *slog.Logger, max int, secrets []string) *slog.Logger {
	return slog.New(&boundedHandler{Handler: l.Handler(), max: max, secrets: secrets})
}

func (h *boundedHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, r.Message, r.PC)
	r.Attrs(func(a slog.Attr) bool {
		if a.Value.Kind() == slog.KindString {
			s, _ := Scrub(a.Value.String(), h.secrets)
			if len(s) > h.max {
				s = s[:h.max] + "…(cut)"
			}
			a = slog.String(a.Key, s)
		}
		out.AddAttrs(a)
		return true
	})
	return h.Handler.Handle(ctx, out)
}

func (h *boundedHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &boundedHandler{Handler: h.Handler.WithAttrs(as), max: h.max, secrets: h.secrets}
}

func (h *boundedHandler) WithGroup(name string) slog.Handler {
	return &boundedHandler{Handler: h.Handler.WithGroup(name), max: h.max, secrets: h.secrets}
}
