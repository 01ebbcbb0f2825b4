package telemetry

import (
	"context"
	"encoding/json"

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

// FromMeta returns ctx continuing the trace an ACP message's `_meta` names (its traceparent and tracestate,
// the keys ACP reserves for W3C trace context), or ctx itself when it names none.
func FromMeta(ctx context.Context, meta json.RawMessage) context.Context {
	if len(meta) == 0 {
		return ctx
	}
	var m struct {
		Traceparent string `json:"traceparent"`
		Tracestate  string `json:"tracestate"`
	}
	if json.Unmarshal(meta, &m) != nil || m.Traceparent == "" {
		return ctx
	}
	c := propagation.MapCarrier{"traceparent": m.Traceparent}
	if m.Tracestate != "" {
		c["tracestate"] = m.Tracestate
	}
	return propagation.TraceContext{}.Extract(ctx, c)
}
