package telemetry

import (
	"context"

	"github.com/acp-gateway/gateway/internal/translate/rawjson"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// GenAI semantic-convention keys (gen_ai.*; not in the otel module's semconv packages) and the gateway's own
// (acp.*) for what ACP reports that the conventions have no name for.
const (
	keyOperation      = attribute.Key("gen_ai.operation.name")
	keyAgentName      = attribute.Key("gen_ai.agent.name")
	keyConversationID = attribute.Key("gen_ai.conversation.id")
	keyFinishReasons  = attribute.Key("gen_ai.response.finish_reasons")
	keyInputTokens    = attribute.Key("gen_ai.usage.input_tokens")
	keyOutputTokens   = attribute.Key("gen_ai.usage.output_tokens")
	keyCacheRead      = attribute.Key("gen_ai.usage.cache_read.input_tokens")
	keyCacheCreation  = attribute.Key("gen_ai.usage.cache_creation.input_tokens")
	keyToolName       = attribute.Key("gen_ai.tool.name")
	keyToolCallID     = attribute.Key("gen_ai.tool.call.id")
	keyToolType       = attribute.Key("gen_ai.tool.type")

	keyTurnID        = attribute.Key("acp.turn.id")
	keyToolKind      = attribute.Key("acp.tool.kind")
	keyToolStatus    = attribute.Key("acp.tool.status")
	keyThoughtTokens = attribute.Key("acp.usage.thought_tokens")
	keyTotalTokens   = attribute.Key("acp.usage.total_tokens")
	keyContextUsed   = attribute.Key("acp.usage.context.used")
	keyContextSize   = attribute.Key("acp.usage.context.size")
	keyCostAmount    = attribute.Key("acp.usage.cost.amount")
	keyCostCurrency  = attribute.Key("acp.usage.cost.currency")
)

// Operation names (gen_ai.operation.name), which also begin the span names.
const (
	OpCreateAgent = "create_agent"
	OpInvokeAgent = "invoke_agent"
	OpExecuteTool = "execute_tool"
)

// Tracer starts the gateway's spans. A nil *Tracer is tracing off: its methods return nil spans whose
// methods do nothing.
type Tracer struct {
	tr trace.Tracer // Static after construction.
}

func newTracer(tr trace.Tracer) *Tracer { return &Tracer{tr: tr} }

// NewTracer wraps tr (tests hand in an SDK tracer of their own).
func NewTracer(tr trace.Tracer) *Tracer { return newTracer(tr) }

// Span is one operation the gateway traces; a nil *Span (tracing off) ignores every call.
type Span struct {
	span trace.Span
}

// StartCreateAgent starts the span of a session's start (spawn, initialize, session/new) of agent for the
// session sessionID; the returned context carries it.
func (t *Tracer) StartCreateAgent(ctx context.Context, agent, sessionID string) (context.Context, *Span) {
	if t == nil {
		return ctx, nil
	}
	ctx, sp := t.tr.Start(ctx, OpCreateAgent+" "+agent, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		keyOperation.String(OpCreateAgent), keyAgentName.String(agent), keyConversationID.String(sessionID)))
	return ctx, &Span{span: sp}
}

// End ends the span, as failed when err is not nil.
func (s *Span) End(err error) {
	if s == nil {
		return
	}
	endWith(s.span, err)
}

func endWith(sp trace.Span, err error) {
	if err != nil {
		sp.SetStatus(codes.Error, rawjson.RedactText(err.Error())) // an agent's error may quote a key
		sp.SetAttributes(semconv.ErrorType(err))
	}
	sp.End()
}
