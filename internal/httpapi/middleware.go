package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
)

type ctxKey int

const requestIDKey ctxKey = iota

// RequestID returns the request's id (also sent as X-Request-Id), for logs.
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey).(string)
	return id
}

// statusRecorder captures the status for logs and metrics. It unwraps to the real writer, so WebSocket
// upgrades (http.Hijacker) and flushing (http.ResponseController) keep working through it.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// observe gives each request an id and a server span, logs it (path only: never the query, which may carry
// a ticket) and records its duration by route pattern and status.
func (s *Server) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := r.Header.Get("X-Request-Id")
		if id == "" || len(id) > 64 || strings.ContainsFunc(id, func(r rune) bool { return r < 0x21 || r > 0x7e }) {
			id = uuid.NewString()
		}
		w.Header().Set("X-Request-Id", id)
		rec := &statusRecorder{ResponseWriter: w}
		ctx, span := s.Tracer.StartRequest(r)
		r = r.WithContext(context.WithValue(ctx, requestIDKey, id))
		next.ServeHTTP(rec, r)
		route := chi.RouteContext(r.Context()).RoutePattern()
		if rec.status == 0 {
			rec.status = http.StatusSwitchingProtocols // hijacked
		}
		span.End(route, rec.status)
		if route == "" {
			route = "unmatched"
		}
		d := time.Since(start)
		s.Metrics.Request(route, rec.status, d)
		level := slog.LevelInfo
		if strings.HasPrefix(route, "/healthz") || strings.HasPrefix(route, "/readyz") || route == "/metrics" {
			level = slog.LevelDebug
		}
		s.logger().Log(r.Context(), level, "request", "request", id, "method", r.Method, "path", truncate(r.URL.Path, 200),
			"route", route, "status", rec.status, "duration", d.Round(time.Microsecond), "session", chi.URLParam(r, "id"))
	})
}

func (s *Server) logger() *slog.Logger {
	if s.Logger == nil {
		return slog.Default()
	}
	return s.Logger
}
