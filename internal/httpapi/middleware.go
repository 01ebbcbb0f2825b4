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

// observe gives each request an id, logs it (path only: never the query, which may carry a ticket) and
// records its duration by route pattern and status.
func (s *Server) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := r.Header.Get("X-Request-Id")
		if id == "" || len(id) > 64 || strings.ContainsFunc(id, func(r rune) bool { return r < 0x21 || r > 0x7e }) {
			id = uuid.NewString()
		}
		w.Header().Set("X-Request-Id", id)
		rec := &statusRecorder{ResponseWriter: w}
		r = r.WithContext(context.WithValue(r.Context(), requestIDKey, id))
		next.ServeHTTP(rec, r)
		route := chi.RouteContext(r.Context()).RoutePattern()
		if route == "" {
			route = "unmatched"
		}
		if rec.status == 0 {
			rec.status = http.StatusSwitchingProtocols // hijacked
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

// originAllowed reports whether a browser origin may use the API: same origin (scheme-less host match), or
// one of the allowed host patterns.
func (s *Server) originAllowed(r *http.Request, origin string) bool {
	host := origin
	if i := strings.Index(host, "://"); i >= 0 {
		host = host[i+3:]
	}
	if strings.EqualFold(host, r.Host) {
		return true
	}
	for _, p := range s.AllowedOrigins {
		if matchHost(p, host) {
			return true
		}
	}
	return false
}

// matchHost matches a host[:port] against a pattern where "*" matches any run of characters.
func matchHost(pattern, host string) bool {
	pattern, host = strings.ToLower(pattern), strings.ToLower(host)
	if !strings.Contains(pattern, "*") {
		return pattern == host
	}
	parts := strings.Split(pattern, "*")
	if !strings.HasPrefix(host, parts[0]) {
		return false
	}
	host = host[len(parts[0]):]
	for i, p := range parts[1:] {
		if i == len(parts)-2 {
			return strings.HasSuffix(host, p)
		}
		j := strings.Index(host, p)
		if j < 0 {
			return false
		}
		host = host[j+len(p):]
	}
	return true
}

// guardOrigin refuses cross-origin state-changing requests from browsers (403), answers CORS preflights for
// allowed origins, and adds CORS headers only for allowed origins. Requests without Origin (curl) pass.
func (s *Server) guardOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin == "" {
			next.ServeHTTP(w, r)
			return
		}
		allowed := s.originAllowed(r, origin)
		if allowed {
			h := w.Header()
			h.Set("Access-Control-Allow-Origin", origin)
			h.Add("Vary", "Origin")
			h.Set("Access-Control-Expose-Headers", "Location, Retry-After, X-Request-Id")
		}
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			if !allowed {
				writeError(w, problem(http.StatusForbidden, "forbidden_origin", "origin not allowed"))
				return
			}
			h := w.Header()
			h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS")
			h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Last-Event-ID, X-Request-Id")
			h.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		stateChanging := r.Method != http.MethodGet && r.Method != http.MethodHead
		if !allowed && (stateChanging || isUpgrade(r)) {
			writeError(w, problem(http.StatusForbidden, "forbidden_origin", "origin "+truncate(origin, 100)+" is not allowed; see --allowed-origins"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func isUpgrade(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}
