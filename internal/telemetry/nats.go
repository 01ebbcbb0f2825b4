package telemetry

import (
	"context"

	"github.com/nats-io/nats.go"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// natsCarrier is a propagation.TextMapCarrier over a NATS message's headers.
type natsCarrier nats.Header

func (c natsCarrier) Get(key string) string { return nats.Header(c).Get(key) }
func (c natsCarrier) Set(key, value string) { nats.Header(c).Set(key, value) }
func (c natsCarrier) Keys() []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	return keys
}

// InjectNATS puts the trace context of ctx (traceparent, tracestate) in m's headers, so the node that serves
// a routed command continues the caller's trace. Without a span in ctx (tracing off) m is left alone.
func InjectNATS(ctx context.Context, m *nats.Msg) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return
	}
	if m.Header == nil {
		m.Header = nats.Header{}
	}
	propagation.TraceContext{}.Inject(ctx, natsCarrier(m.Header))
}

// ExtractNATS returns ctx with the remote trace context m's headers carry, if any.
func ExtractNATS(ctx context.Context, m *nats.Msg) context.Context {
	if m.Header == nil {
		return ctx
	}
	return propagation.TraceContext{}.Extract(ctx, natsCarrier(m.Header))
}
