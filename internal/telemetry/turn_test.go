package telemetry

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/nats-io/nats.go"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

func recording(t *testing.T) (*Tracer, *tracetest.SpanRecorder) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return NewTracer(tp.Tracer("test")), rec
}

func attrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value
	}
	return m
}

func ended(rec *tracetest.SpanRecorder, name string) sdktrace.ReadOnlySpan {
	for _, s := range rec.Ended() {
		if s.Name() == name {
			return s
		}
	}
	return nil
}

// TestTurnToolSpans: a tool_call opens an execute_tool span under the turn; a terminal tool_call_update
// ends it (failed as an error); one still open when the turn ends is ended "unfinished"; usage lands on the
// turn; updates after the end are ignored.
func TestTurnToolSpans(t *testing.T) {
	tr, rec := recording(t)
	turn := tr.StartTurn(context.Background(), "claude", "sess-1", "turn-1")
	turn.Update([]byte(`{"sessionId":"a","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"tool_call"}}}`))
	turn.Update([]byte(`{"sessionId":"a","update":{"sessionUpdate":"tool_call","toolCallId":"t1","title":"Read a.go","kind":"read","status":"pending"}}`))
	turn.Update([]byte(`{"sessionId":"a","update":{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"in_progress"}}`))
	if len(rec.Ended()) != 0 {
		t.Fatalf("a tool call in progress ended its span")
	}
	turn.Update([]byte(`{"sessionId":"a","update":{"sessionUpdate":"tool_call_update","toolCallId":"t1","title":"Read b.go","status":"completed"}}`))
	turn.Update([]byte(`{"sessionId":"a","update":{"sessionUpdate":"tool_call","toolCallId":"t2","title":"Run make","kind":"execute","status":"in_progress"}}`))
	turn.Update([]byte(`{"sessionId":"a","update":{"sessionUpdate":"tool_call_update","toolCallId":"t2","status":"failed"}}`))
	turn.Update([]byte(`{"sessionId":"a","update":{"sessionUpdate":"tool_call","toolCallId":"t3","title":"Edit c.go","status":"completed"}}`))
	turn.Update([]byte(`{"sessionId":"a","update":{"sessionUpdate":"tool_call","toolCallId":"t4","title":"Fetch","status":"pending"}}`))
	turn.Update([]byte(`{"sessionId":"a","update":{"sessionUpdate":"tool_call","toolCallId":"t6","title":"curl -H 'Authorization: Bearer sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789' x","status":"completed"}}`))
	turn.Update([]byte(`{"sessionId":"a","update":{"sessionUpdate":"usage_update","used":1200,"size":200000,"cost":{"amount":0.25,"currency":"USD"}}}`))
	turn.Answered([]byte(`{"stopReason":"end_turn","usage":{"inputTokens":10,"outputTokens":20,"totalTokens":30,"cachedReadTokens":5}}`))
	turn.End("end_turn", nil)
	turn.Update([]byte(`{"sessionId":"a","update":{"sessionUpdate":"tool_call","toolCallId":"t5","title":"Late","status":"pending"}}`))
	turn.End("cancelled", errors.New("again"))

	it := ended(rec, "invoke_agent claude")
	if it == nil || len(rec.Ended()) != 6 {
		t.Fatalf("ended %d spans, want the turn and 5 tool calls", len(rec.Ended()))
	}
	for _, s := range rec.Ended() {
		if strings.Contains(s.Name(), "sk-ant") || strings.Contains(attrs(s)[keyToolName].AsString(), "sk-ant") {
			t.Errorf("a tool span shows the key: %q", s.Name())
		}
	}
	a := attrs(it)
	if a[keyConversationID].AsString() != "sess-1" || a[keyOperation].AsString() != "invoke_agent" || a[keyInputTokens].AsInt64() != 10 ||
		a[keyOutputTokens].AsInt64() != 20 || a[keyCacheRead].AsInt64() != 5 || a[keyContextUsed].AsInt64() != 1200 ||
		a[keyCostAmount].AsFloat64() != 0.25 || strings.Join(a[keyFinishReasons].AsStringSlice(), ",") != "end_turn" || it.Status().Code == codes.Error {
		t.Errorf("invoke_agent attributes %v status %v", it.Attributes(), it.Status())
	}
	for name, want := range map[string]string{"execute_tool Read b.go": "completed", "execute_tool Run make": "failed", "execute_tool Edit c.go": "completed", "execute_tool Fetch": "unfinished"} {
		s := ended(rec, name)
		if s == nil {
			t.Errorf("no span %q", name)
			continue
		}
		if got := attrs(s)[keyToolStatus].AsString(); got != want {
			t.Errorf("%s status %q, want %q", name, got, want)
		}
		if s.Parent().SpanID() != it.SpanContext().SpanID() {
			t.Errorf("%s is not a child of the turn", name)
		}
		if (want == "failed") != (s.Status().Code == codes.Error) {
			t.Errorf("%s span status %v", name, s.Status())
		}
	}
}

// TestTurnMetaIsItsTraceparent: the _meta given to the agent names the invoke_agent span.
func TestTurnMetaIsItsTraceparent(t *testing.T) {
	tr, rec := recording(t)
	turn := tr.StartTurn(context.Background(), "a", "s", "t")
	meta := turn.Meta()
	turn.End("end_turn", nil)
	sc := rec.Ended()[0].SpanContext()
	if want := "00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-01"; meta["traceparent"] != want {
		t.Errorf("_meta %v, want traceparent %s", meta, want)
	}
}

// TestOffIsNil: every hook of a nil Tracer (tracing off) does nothing, and the middleware is the handler.
func TestOffIsNil(t *testing.T) {
	var tr *Tracer
	ctx, sp := tr.StartCreateAgent(context.Background(), "a", "s")
	sp.End(errors.New("x"))
	turn := tr.StartTurn(ctx, "a", "s", "t")
	turn.Update([]byte(`{"update":{"sessionUpdate":"tool_call","toolCallId":"x"}}`))
	turn.Answered([]byte(`{"usage":{"inputTokens":1}}`))
	if turn.Meta() != nil {
		t.Errorf("a nil turn has _meta")
	}
	turn.End("end_turn", nil)
	req := httptest.NewRequest("GET", "/v1/sessions", nil)
	ctx, rs := tr.StartRequest(req)
	if ctx != req.Context() || rs != nil {
		t.Errorf("a nil tracer started a request span")
	}
	rs.End("/v1/sessions", 200)
}

// TestNATSHeadersCarryTheTrace: a command's headers carry the caller's span to the node serving it; without
// a span nothing is added.
func TestNATSHeadersCarryTheTrace(t *testing.T) {
	m := &nats.Msg{Subject: "x"}
	InjectNATS(context.Background(), m)
	if m.Header != nil {
		t.Fatalf("headers added without a span: %v", m.Header)
	}
	tr, _ := recording(t)
	ctx, sp := tr.StartCreateAgent(context.Background(), "a", "s")
	InjectNATS(ctx, m)
	got := trace.SpanContextFromContext(ExtractNATS(context.Background(), m))
	want := trace.SpanContextFromContext(ctx)
	if !got.IsRemote() || got.TraceID() != want.TraceID() || got.SpanID() != want.SpanID() {
		t.Errorf("extracted %v, want %v", got, want)
	}
	sp.End(nil)
}

// BenchmarkTurnUpdate is what an agent update costs the trace of its turn: nothing when tracing is off, a
// byte scan for an update that is not a tool call or usage, a decode for one that is.
func BenchmarkTurnUpdate(b *testing.B) {
	chunk := []byte(`{"sessionId":"a","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` + strings.Repeat("x", 256) + `"}}}`)
	tool := []byte(`{"sessionId":"a","update":{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"in_progress"}}`)
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	on := NewTracer(tp.Tracer("bench")).StartTurn(context.Background(), "a", "s", "t")
	on.Update([]byte(`{"update":{"sessionUpdate":"tool_call","toolCallId":"t1","title":"Read"}}`))
	var off *Turn
	for _, bc := range []struct {
		name   string
		turn   *Turn
		params []byte
	}{{"off", off, tool}, {"onChunk", on, chunk}, {"onToolUpdate", on, tool}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				bc.turn.Update(bc.params)
			}
		})
	}
}

// TestRequestSpans: a request gets a server span named by its route, a child of the client's traceparent;
// a probe gets none.
func TestRequestSpans(t *testing.T) {
	tr, rec := recording(t)
	r := chi.NewRouter()
	r.Use(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			ctx, rs := tr.StartRequest(req)
			next.ServeHTTP(w, req.WithContext(ctx))
			rs.End(chi.RouteContext(req.Context()).RoutePattern(), http.StatusTeapot)
		})
	})
	r.Get("/v1/sessions/{id}", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) })
	r.Get("/healthz", func(w http.ResponseWriter, r *http.Request) {})
	for _, path := range []string{"/v1/sessions/abc", "/healthz"} {
		req := httptest.NewRequest("GET", path, nil)
		req.Header.Set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
		r.ServeHTTP(httptest.NewRecorder(), req)
	}
	spans := rec.Ended()
	if len(spans) != 1 {
		t.Fatalf("%d spans, want 1 (none for the probe)", len(spans))
	}
	s := spans[0]
	a := attrs(s)
	if s.Name() != "GET /v1/sessions/{id}" || a["http.route"].AsString() != "/v1/sessions/{id}" || a["http.response.status_code"].AsInt64() != 418 ||
		s.Parent().SpanID().String() != "00f067aa0ba902b7" || s.SpanContext().TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Errorf("span %q attributes %v parent %v", s.Name(), s.Attributes(), s.Parent())
	}
}
