package telemetry

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"

	"github.com/acp-gateway/gateway/internal/translate/rawjson"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// Turn is the invoke_agent span of one prompt turn and the execute_tool spans of the tool calls the agent
// reports in it. A nil *Turn (tracing off) ignores every call.
type Turn struct {
	ctx  context.Context // Static after construction: carries span, the parent of the tool spans.
	span trace.Span      // Static after construction.
	tr   trace.Tracer    // Static after construction.

	mu    sync.Mutex
	tools map[string]trace.Span // Guarded by mu: open tool calls by toolCallId.
	ended bool                  // Guarded by mu.
}

// StartTurn starts the invoke_agent span of turn turnID of session sessionID, run by agent, as a child of
// the span in ctx (the request that prompted, here or on another node).
func (t *Tracer) StartTurn(ctx context.Context, agent, sessionID, turnID string) *Turn {
	if t == nil {
		return nil
	}
	_, sp := t.tr.Start(ctx, OpInvokeAgent+" "+agent, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		keyOperation.String(OpInvokeAgent), keyAgentName.String(agent), keyConversationID.String(sessionID), keyTurnID.String(turnID)))
	// The turn outlives the request that started it: its tool spans hang off the span, not the request.
	return &Turn{ctx: trace.ContextWithSpan(context.Background(), sp), span: sp, tr: t.tr, tools: map[string]trace.Span{}}
}

// Meta is the `_meta` the turn's session/prompt carries to the agent: traceparent (and tracestate) of the
// invoke_agent span, the keys ACP reserves for W3C trace context. Nil when there is nothing to carry.
func (t *Turn) Meta() map[string]any {
	if t == nil || !t.span.SpanContext().IsValid() {
		return nil
	}
	c := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(t.ctx, c)
	m := make(map[string]any, len(c))
	for k, v := range c {
		m[k] = v
	}
	return m
}

// toolUpdate is what the turn reads of an agent's session/update.
type toolUpdate struct {
	Update struct {
		Kind       string `json:"sessionUpdate"`
		ToolCallID string `json:"toolCallId"`
		Title      string `json:"title"`
		ToolKind   string `json:"kind"`
		Status     string `json:"status"`
		Used       *int64 `json:"used"`
		Size       *int64 `json:"size"`
		Cost       *struct {
			Amount   float64 `json:"amount"`
			Currency string  `json:"currency"`
		} `json:"cost"`
	} `json:"update"`
}

var (
	markToolCall = []byte(`"tool_call`)
	markUsage    = []byte(`"usage_update"`)
)

// Update reads an agent's session/update params: a tool_call starts an execute_tool span, a
// tool_call_update with a terminal status (completed, failed) ends it, a usage_update is recorded on the
// turn. Other updates are not decoded.
func (t *Turn) Update(params []byte) {
	if t == nil || (!bytes.Contains(params, markToolCall) && !bytes.Contains(params, markUsage)) {
		return
	}
	var u toolUpdate
	if json.Unmarshal(params, &u) != nil {
		return
	}
	up := u.Update
	up.Title = rawjson.RedactText(up.Title) // a title may quote a command line, and a key in it
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ended {
		return
	}
	switch up.Kind {
	case "usage_update":
		if up.Used != nil {
			t.span.SetAttributes(keyContextUsed.Int64(*up.Used))
		}
		if up.Size != nil {
			t.span.SetAttributes(keyContextSize.Int64(*up.Size))
		}
		if up.Cost != nil {
			t.span.SetAttributes(keyCostAmount.Float64(up.Cost.Amount), keyCostCurrency.String(up.Cost.Currency))
		}
	case "tool_call":
		if up.ToolCallID == "" {
			return
		}
		if _, open := t.tools[up.ToolCallID]; open {
			return
		}
		_, sp := t.tr.Start(t.ctx, OpExecuteTool+" "+up.Title, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(
			keyOperation.String(OpExecuteTool), keyToolName.String(up.Title), keyToolCallID.String(up.ToolCallID),
			keyToolType.String("extension"), keyToolKind.String(up.ToolKind)))
		t.tools[up.ToolCallID] = sp
		t.toolStatusLocked(up.ToolCallID, sp, up.Status)
	case "tool_call_update":
		sp, open := t.tools[up.ToolCallID]
		if !open {
			return
		}
		if up.Title != "" {
			sp.SetName(OpExecuteTool + " " + up.Title)
			sp.SetAttributes(keyToolName.String(up.Title))
		}
		t.toolStatusLocked(up.ToolCallID, sp, up.Status)
	}
}

// toolStatusLocked ends the tool call's span when status is terminal.
func (t *Turn) toolStatusLocked(id string, sp trace.Span, status string) {
	switch status {
	case "completed":
	case "failed":
		sp.SetStatus(codes.Error, "tool call failed")
		sp.SetAttributes(semconv.ErrorTypeKey.String("tool_failed"))
	default:
		return
	}
	sp.SetAttributes(keyToolStatus.String(status))
	sp.End()
	delete(t.tools, id)
}

// promptUsage is the (unstable) usage of ACP's PromptResponse.
type promptUsage struct {
	Usage *struct {
		InputTokens       *int64 `json:"inputTokens"`
		OutputTokens      *int64 `json:"outputTokens"`
		TotalTokens       *int64 `json:"totalTokens"`
		ThoughtTokens     *int64 `json:"thoughtTokens"`
		CachedReadTokens  *int64 `json:"cachedReadTokens"`
		CachedWriteTokens *int64 `json:"cachedWriteTokens"`
	} `json:"usage"`
}

// Answered records the token usage of the agent's session/prompt answer, when it reports any.
func (t *Turn) Answered(result []byte) {
	if t == nil || len(result) == 0 {
		return
	}
	var r promptUsage
	if json.Unmarshal(result, &r) != nil || r.Usage == nil {
		return
	}
	var kvs []attribute.KeyValue
	for _, f := range []struct {
		key attribute.Key
		v   *int64
	}{
		{keyInputTokens, r.Usage.InputTokens}, {keyOutputTokens, r.Usage.OutputTokens},
		{keyTotalTokens, r.Usage.TotalTokens}, {keyThoughtTokens, r.Usage.ThoughtTokens},
		{keyCacheRead, r.Usage.CachedReadTokens}, {keyCacheCreation, r.Usage.CachedWriteTokens},
	} {
		if f.v != nil {
			kvs = append(kvs, f.key.Int64(*f.v))
		}
	}
	t.span.SetAttributes(kvs...)
}

// End ends the turn's span with its stop reason (as gen_ai.response.finish_reasons), as failed when the agent
// failed the turn, and ends the tool calls still open (acp.tool.status "unfinished").
func (t *Turn) End(stopReason string, err error) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ended {
		return
	}
	t.ended = true
	for id, sp := range t.tools {
		sp.SetAttributes(keyToolStatus.String("unfinished"))
		sp.End()
		delete(t.tools, id)
	}
	if stopReason != "" {
		t.span.SetAttributes(keyFinishReasons.StringSlice([]string{stopReason}))
	}
	endWith(t.span, err)
}
