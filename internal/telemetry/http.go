package telemetry

import (
	"net"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// Middleware gives each request an HTTP server span named "{method} {chi route pattern}", a child of the
// client's traceparent when it sent one. It must run inside the chi router (Use), where the route pattern
// is known once the request has been served. Probes (/healthz, /readyz, /metrics) get none: a load balancer's
// checks every few seconds would bury the traces that matter. With tracing off it returns next itself.
func (t *Tracer) Middleware(next http.Handler) http.Handler {
	if t == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/healthz", "/readyz", "/metrics":
			next.ServeHTTP(w, r)
			return
		}
		ctx := propagation.TraceContext{}.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		// The path is left out: the route names it, and a query may carry a ticket.
		ctx, sp := t.tr.Start(ctx, r.Method, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(
			semconv.HTTPRequestMethodKey.String(r.Method), semconv.URLScheme(scheme),
			semconv.NetworkProtocolVersion(strconv.Itoa(r.ProtoMajor)+"."+strconv.Itoa(r.ProtoMinor))))
		if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
			sp.SetAttributes(semconv.ClientAddress(host))
		}
		if ua := r.UserAgent(); ua != "" {
			sp.SetAttributes(semconv.UserAgentOriginal(ua))
		}
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r.WithContext(ctx))
		if rc := chi.RouteContext(r.Context()); rc != nil {
			if route := rc.RoutePattern(); route != "" {
				sp.SetName(r.Method + " " + route)
				sp.SetAttributes(semconv.HTTPRoute(route))
			}
		}
		status := rec.status
		if status == 0 {
			status = http.StatusSwitchingProtocols // hijacked: a WebSocket
		}
		sp.SetAttributes(semconv.HTTPResponseStatusCode(status))
		if status >= 500 {
			sp.SetStatus(codes.Error, "")
			sp.SetAttributes(semconv.ErrorTypeKey.String(strconv.Itoa(status)))
		}
		sp.End()
	})
}

// statusRecorder captures the response status. It unwraps to the real writer, so WebSocket upgrades and
// flushing (http.ResponseController) keep working through it.
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
