package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/acp-gateway/gateway/internal/store/natstest"
)

// otlpReceiver is an in-process OTLP/HTTP collector: it accepts protobuf exports on /v1/traces and keeps the
// spans and their resources.
type otlpReceiver struct {
	srv *httptest.Server

	mu        sync.Mutex
	spans     []*tracepb.Span      // Guarded by mu.
	resources []*commonpb.KeyValue // Guarded by mu: the attributes of every exported resource.
	bad       []string             // Guarded by mu: requests it could not read.
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	t.Helper()
	rc := &otlpReceiver{}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				rc.fail(fmt.Sprintf("gzip: %v", err))
				w.WriteHeader(http.StatusBadRequest)
				return
			}
			body = zr
		}
		data, err := io.ReadAll(body)
		var req coltracepb.ExportTraceServiceRequest
		if err == nil {
			err = proto.Unmarshal(data, &req)
		}
		if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" || err != nil {
			rc.fail(fmt.Sprintf("%s %s %s: %v", r.Method, r.URL.Path, r.Header.Get("Content-Type"), err))
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		rc.mu.Lock()
		for _, rs := range req.GetResourceSpans() {
			rc.resources = append(rc.resources, rs.GetResource().GetAttributes()...)
			for _, ss := range rs.GetScopeSpans() {
				rc.spans = append(rc.spans, ss.GetSpans()...)
			}
		}
		rc.mu.Unlock()
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *otlpReceiver) fail(s string) {
	rc.mu.Lock()
	rc.bad = append(rc.bad, s)
	rc.mu.Unlock()
}

func (rc *otlpReceiver) snapshot() ([]*tracepb.Span, []*commonpb.KeyValue, []string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]*tracepb.Span(nil), rc.spans...), append([]*commonpb.KeyValue(nil), rc.resources...), append([]string(nil), rc.bad...)
}

// startGatewayEnv is startGateway with environment variables (env) that run reads through its getenv.
func startGatewayEnv(t *testing.T, env map[string]string, args ...string) *gateway {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	g := &gateway{t: t, cancel: cancel, done: make(chan error, 1), logs: &syncBuffer{}}
	full := append([]string{"--addr", "127.0.0.1:0", "--demo-delay", "0", "--workdir", t.TempDir()}, args...)
	go func() { g.done <- run(ctx, full, func(k string) string { return env[k] }, io.Discard, g.logs) }()
	deadline := time.Now().Add(60 * time.Second) // a cluster node joins first
	for g.base == "" && time.Now().Before(deadline) {
		if m := listenRE.FindStringSubmatch(g.logs.String()); m != nil {
			g.base = "http://" + m[1]
			break
		}
		select {
		case err := <-g.done:
			t.Fatalf("gateway exited: %v\n%s", err, g.logs.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	if g.base == "" {
		t.Fatalf("gateway did not log its address:\n%s", g.logs.String())
	}
	t.Cleanup(func() { g.stop() })
	return g
}

// doTraced is g.do with a W3C traceparent header.
func (g *gateway) doTraced(method, path, traceparent string, body, out any) int {
	g.t.Helper()
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, g.base+path, bytes.NewReader(raw))
	req.Header.Set("traceparent", traceparent)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		g.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			g.t.Fatalf("%s %s: decode %q: %v", method, path, data, err)
		}
	}
	return resp.StatusCode
}

// attr is a span attribute's value as text ("" when absent); arrays are joined with ",".
func attr(sp *tracepb.Span, key string) string {
	return attrOf(sp.GetAttributes(), key)
}

func attrOf(kvs []*commonpb.KeyValue, key string) string {
	for _, kv := range kvs {
		if kv.GetKey() != key {
			continue
		}
		v := kv.GetValue()
		switch x := v.GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			return x.StringValue
		case *commonpb.AnyValue_IntValue:
			return fmt.Sprint(x.IntValue)
		case *commonpb.AnyValue_DoubleValue:
			return fmt.Sprint(x.DoubleValue)
		case *commonpb.AnyValue_ArrayValue:
			var parts []string
			for _, e := range x.ArrayValue.GetValues() {
				parts = append(parts, e.GetStringValue())
			}
			return strings.Join(parts, ",")
		}
	}
	return ""
}

func spansNamed(spans []*tracepb.Span, name string) []*tracepb.Span {
	var out []*tracepb.Span
	for _, sp := range spans {
		if sp.GetName() == name {
			out = append(out, sp)
		}
	}
	return out
}

func oneSpan(t *testing.T, spans []*tracepb.Span, name string) *tracepb.Span {
	t.Helper()
	got := spansNamed(spans, name)
	if len(got) != 1 {
		var names []string
		for _, sp := range spans {
			names = append(names, sp.GetName())
		}
		t.Fatalf("%d spans named %q, want 1; spans: %q", len(got), name, names)
	}
	return got[0]
}

func hexID(b []byte) string { return hex.EncodeToString(b) }

// TestTracesFollowAPromptToTheAgent runs the gateway with OTEL_EXPORTER_OTLP_ENDPOINT set to an in-process
// OTLP receiver, prompts the demo agent (a read and an edit tool call) and the echo test agent with a
// client's traceparent, and checks the span tree: HTTP server span under the client's span, invoke_agent
// under it, execute_tool under that, create_agent for the session start, and the agent given
// `_meta.traceparent` of its invoke_agent span.
func TestTracesFollowAPromptToTheAgent(t *testing.T) {
	rc := newOTLPReceiver(t)
	bin := filepath.Join(t.TempDir(), "testagent-echo")
	if err := os.Symlink(testAgentBinary(t), bin); err != nil {
		t.Fatal(err)
	}
	g := startGatewayEnv(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": rc.srv.URL, "OTEL_SERVICE_NAME": "gw-under-test"},
		"--agent", "ta="+bin+" -mode echo")

	const (
		clientTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
		clientSpan  = "00f067aa0ba902b7"
		echoTrace   = "0af7651916cd43dd8448eb211c80319c"
		acpTrace    = "1af7651916cd43dd8448eb211c80319d"
	)
	var demo sessionJSON
	if code := g.doTraced("POST", "/v1/sessions", "00-"+clientTrace+"-"+clientSpan+"-01",
		map[string]any{"agent": "demo", "permissionPolicy": "approve-all"}, &demo); code != http.StatusCreated {
		t.Fatalf("create demo session: %d\n%s", code, g.logs.String())
	}
	var res struct {
		TurnID     string `json:"turnId"`
		StopReason string `json:"stopReason"`
		Text       string `json:"text"`
	}
	if code := g.doTraced("POST", "/v1/sessions/"+demo.ID+"/prompt?wait=true", "00-"+clientTrace+"-"+clientSpan+"-01",
		map[string]any{"text": "read the readme and take notes"}, &res); code != http.StatusOK || res.StopReason != "end_turn" {
		t.Fatalf("demo prompt: %d %+v", code, res)
	}
	echo := g.createSession(map[string]any{"agent": "ta"})
	var echoRes struct {
		StopReason string `json:"stopReason"`
		Text       string `json:"text"`
	}
	if code := g.doTraced("POST", "/v1/sessions/"+echo.ID+"/prompt?wait=true", "00-"+echoTrace+"-"+clientSpan+"-01",
		map[string]any{"text": "hi"}, &echoRes); code != http.StatusOK {
		t.Fatalf("echo prompt: %d %+v", code, echoRes)
	}
	// Over `/acp` the client's trace context is the prompt's `_meta.traceparent`.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dialACP(t, g, ctx, acpInitialize,
		`{"jsonrpc":"2.0","id":2,"method":"session/load","params":{"sessionId":"`+echo.ID+`","cwd":"`+echo.Cwd+`","mcpServers":[]}}`,
		`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"`+echo.ID+`","prompt":[{"type":"text","text":"hi"}],"_meta":{"traceparent":"00-`+acpTrace+`-`+clientSpan+`-01"}}}`)
	if err := g.stop(); err != nil { // the shutdown flushes the spans still buffered
		t.Fatalf("stop: %v", err)
	}
	spans, resources, bad := rc.snapshot()
	if len(bad) > 0 {
		t.Fatalf("the receiver could not read: %q", bad)
	}
	if got := attrOf(resources, "service.name"); got != "gw-under-test" {
		t.Errorf("service.name = %q, want OTEL_SERVICE_NAME's gw-under-test", got)
	}

	// The prompt: client span → HTTP server span → invoke_agent → execute_tool ×2.
	httpSpan := spansNamed(spans, "POST /v1/sessions/{id}/prompt")
	var promptSpan *tracepb.Span
	for _, sp := range httpSpan {
		if hexID(sp.GetTraceId()) == clientTrace {
			promptSpan = sp
		}
	}
	if promptSpan == nil {
		t.Fatalf("no HTTP span of the demo prompt in the client's trace; spans %d", len(spans))
	}
	if hexID(promptSpan.GetParentSpanId()) != clientSpan || promptSpan.GetKind() != tracepb.Span_SPAN_KIND_SERVER {
		t.Errorf("HTTP span parent %s kind %v, want the client's %s, SERVER", hexID(promptSpan.GetParentSpanId()), promptSpan.GetKind(), clientSpan)
	}
	if attr(promptSpan, "http.route") != "/v1/sessions/{id}/prompt" || attr(promptSpan, "http.response.status_code") != "200" || attr(promptSpan, "http.request.method") != "POST" {
		t.Errorf("HTTP span attributes %v", promptSpan.GetAttributes())
	}
	turn := oneSpan(t, spans, "invoke_agent demo")
	if hexID(turn.GetTraceId()) != clientTrace || hexID(turn.GetParentSpanId()) != hexID(promptSpan.GetSpanId()) {
		t.Errorf("invoke_agent trace %s parent %s, want trace %s under the HTTP span %s",
			hexID(turn.GetTraceId()), hexID(turn.GetParentSpanId()), clientTrace, hexID(promptSpan.GetSpanId()))
	}
	for key, want := range map[string]string{
		"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "demo", "gen_ai.conversation.id": demo.ID,
		"gen_ai.response.finish_reasons": "end_turn", "acp.turn.id": res.TurnID, "acp.usage.context.size": "200000",
		"acp.usage.cost.currency": "USD",
	} {
		if got := attr(turn, key); got != want {
			t.Errorf("invoke_agent %s = %q, want %q", key, got, want)
		}
	}
	if turn.GetKind() != tracepb.Span_SPAN_KIND_CLIENT {
		t.Errorf("invoke_agent kind %v, want CLIENT", turn.GetKind())
	}
	for _, name := range []string{"execute_tool Read README.md", "execute_tool Edit notes.md"} {
		tool := oneSpan(t, spans, name)
		if hexID(tool.GetParentSpanId()) != hexID(turn.GetSpanId()) || hexID(tool.GetTraceId()) != clientTrace {
			t.Errorf("%s is not a child of invoke_agent", name)
		}
		if attr(tool, "gen_ai.operation.name") != "execute_tool" || attr(tool, "gen_ai.tool.call.id") == "" ||
			attr(tool, "acp.tool.status") != "completed" || !strings.HasSuffix(name, attr(tool, "gen_ai.tool.name")) {
			t.Errorf("%s attributes %v", name, tool.GetAttributes())
		}
		if tool.GetStartTimeUnixNano() < turn.GetStartTimeUnixNano() || tool.GetEndTimeUnixNano() > turn.GetEndTimeUnixNano() {
			t.Errorf("%s is not within its turn", name)
		}
	}

	// The session start: create_agent under the create request's span.
	var create *tracepb.Span
	for _, sp := range spansNamed(spans, "create_agent demo") {
		if attr(sp, "gen_ai.conversation.id") == demo.ID {
			create = sp
		}
	}
	if create == nil || hexID(create.GetTraceId()) != clientTrace || attr(create, "gen_ai.operation.name") != "create_agent" {
		t.Fatalf("no create_agent span of the demo session in the client's trace: %v", create)
	}
	var createHTTP *tracepb.Span
	for _, sp := range spansNamed(spans, "POST /v1/sessions") {
		if hexID(sp.GetTraceId()) == clientTrace {
			createHTTP = sp
		}
	}
	if createHTTP == nil || hexID(create.GetParentSpanId()) != hexID(createHTTP.GetSpanId()) {
		t.Errorf("create_agent is not a child of the client's POST /v1/sessions span")
	}

	// The agent got the invoke_agent span as its parent: `_meta.traceparent` of session/prompt.
	byTrace := map[string]*tracepb.Span{}
	for _, sp := range spansNamed(spans, "invoke_agent ta") {
		byTrace[hexID(sp.GetTraceId())] = sp
	}
	echoTurn := byTrace[echoTrace]
	if echoTurn == nil {
		t.Fatalf("no invoke_agent span of the echo turn in the client's trace")
	}
	want := "meta traceparent 00-" + echoTrace + "-" + hexID(echoTurn.GetSpanId()) + "-01\n"
	if !strings.Contains(echoRes.Text, want) {
		t.Errorf("the echo agent says:\n%s\nwant a line %q", echoRes.Text, want)
	}
	if acpTurn := byTrace[acpTrace]; acpTurn == nil || hexID(acpTurn.GetParentSpanId()) != clientSpan {
		t.Errorf("the /acp prompt's turn is not a child of its _meta.traceparent: %v", acpTurn)
	}
}

// TestTracesOffByDefault: without OTEL_* variables the gateway exports nothing and sends agents no
// `_meta.traceparent`, even when the client sent a traceparent.
func TestTracesOffByDefault(t *testing.T) {
	t.Parallel()
	g, _ := testAgentGateway(t, "echo")
	s := g.createSession(nil)
	var res struct{ Text string }
	if code := g.doTraced("POST", "/v1/sessions/"+s.ID+"/prompt?wait=true", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		map[string]any{"text": "hi"}, &res); code != http.StatusOK {
		t.Fatalf("prompt: %d", code)
	}
	if strings.Contains(res.Text, "traceparent") {
		t.Errorf("tracing is off, yet the agent got a trace context:\n%s", res.Text)
	}
	if strings.Contains(g.logs.String(), "traces on") {
		t.Errorf("tracing is on without OTEL_* variables")
	}
}

// TestTracesCrossNodes: a prompt sent to node b for a session node a runs is one trace: the invoke_agent span
// a exports is a child of the HTTP span b exported, through the routed command's NATS headers.
func TestTracesCrossNodes(t *testing.T) {
	rc := newOTLPReceiver(t)
	srv := natstest.Listen(t)
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": rc.srv.URL}
	node := func(id string) *gateway {
		return startGatewayEnv(t, env, "--nats-url", srv.URL(), "--nats-replicas", "1", "--node-id", id, "--shutdown-timeout", "3s")
	}
	a, b := node("a"), node("b")
	waitNodes(t, b, "a", "b")
	s := a.createSession(map[string]any{"agent": "demo"})
	natstest.Poll(t, "node b knows the session", 20*time.Millisecond, func() bool {
		return b.do("GET", "/v1/sessions/"+s.ID, nil, nil) == http.StatusOK
	})
	const clientTrace, clientSpan = "5bf92f3577b34da6a3ce929d0e0e4736", "10f067aa0ba902b7"
	var res struct {
		StopReason string `json:"stopReason"`
	}
	if code := b.doTraced("POST", "/v1/sessions/"+s.ID+"/prompt?wait=true", "00-"+clientTrace+"-"+clientSpan+"-01",
		map[string]any{"text": "/echo across"}, &res); code != http.StatusOK || res.StopReason != "end_turn" {
		t.Fatalf("prompt through b: %d %+v", code, res)
	}
	for _, g := range []*gateway{b, a} {
		if err := g.stop(); err != nil {
			t.Fatalf("stop: %v", err)
		}
	}
	spans, _, bad := rc.snapshot()
	if len(bad) > 0 {
		t.Fatalf("the receiver could not read: %q", bad)
	}
	var onB *tracepb.Span
	for _, sp := range spansNamed(spans, "POST /v1/sessions/{id}/prompt") {
		if hexID(sp.GetTraceId()) == clientTrace {
			onB = sp
		}
	}
	if onB == nil || hexID(onB.GetParentSpanId()) != clientSpan {
		t.Fatalf("no HTTP span of the prompt on b under the client's span")
	}
	turn := oneSpan(t, spans, "invoke_agent demo")
	if hexID(turn.GetTraceId()) != clientTrace || hexID(turn.GetParentSpanId()) != hexID(onB.GetSpanId()) {
		t.Errorf("invoke_agent on a: trace %s parent %s, want trace %s under b's HTTP span %s",
			hexID(turn.GetTraceId()), hexID(turn.GetParentSpanId()), clientTrace, hexID(onB.GetSpanId()))
	}
	if attr(turn, "gen_ai.conversation.id") != s.ID {
		t.Errorf("invoke_agent conversation %q, want %s", attr(turn, "gen_ai.conversation.id"), s.ID)
	}
}

// TestTracesBadConfigStopsTheStart: an OTEL_* setting the gateway cannot honour stops the start with a message
// naming the variable, before the port is taken.
func TestTracesBadConfigStopsTheStart(t *testing.T) {
	t.Parallel()
	env := map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}
	err := run(context.Background(), []string{"--addr", "127.0.0.1:0", "--workdir", t.TempDir()},
		func(k string) string { return env[k] }, io.Discard, io.Discard)
	want := `OTEL_TRACES_EXPORTER "zipkin": want otlp or none (this gateway exports traces over OTLP only)`
	if err == nil || err.Error() != want {
		t.Fatalf("run: %v, want %q", err, want)
	}
}
