package telemetry

import (
	"context"
	"net"
	"net/http"
	"strconv"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// RequestSpan is the HTTP server span of one request. The router's middleware, which already records the
// status for logs and metrics, starts it before serving and ends it with the route and status after.
type RequestSpan struct {
	sp     trace.Span
	method string
}

// StartRequest returns the request's context with its server span, a child of the client's traceparent when
// it sent one. Probes (/healthz, /readyz, /metrics) get none: a load balancer's checks every few seconds would
// bury the traces that matter. With tracing off it returns the request's context and a nil span.
func (t *Tracer) StartRequest(r *http.Request) (context.Context, *RequestSpan) {
	if t == nil {
		return r.Context(), nil
	}
	switch r.URL.Path {
	case "/healthz", "/readyz", "/metrics":
		return r.Context(), nil
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
	return ctx, &RequestSpan{sp: sp, method: r.Method}
}

// End names the span "{method} {route}" (route is the router's pattern, empty when none matched) and
// records the status; a 5xx marks it as an error.
func (s *RequestSpan) End(route string, status int) {
	if s == nil {
		return
	}
	if route != "" {
		s.sp.SetName(s.method + " " + route)
		s.sp.SetAttributes(semconv.HTTPRoute(route))
	}
	s.sp.SetAttributes(semconv.HTTPResponseStatusCode(status))
	if status >= 500 {
		s.sp.SetStatus(codes.Error, "")
		s.sp.SetAttributes(semconv.ErrorTypeKey.String(strconv.Itoa(status)))
	}
	s.sp.End()
}
