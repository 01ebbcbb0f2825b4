package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Event is one line an events-dialect agent printed on stdout, decoded. Which fields matter depends on
// Type; docs/events.md is the reference. Fields whose JSON type varies (args, output, used, size, cost,
// tokens) stay raw and are interpreted by the translation.
type Event struct {
	Type string `json:"type"`

	ID     string `json:"id,omitempty"`     // tool_call, tool_result, subagent, warning, permission_request
	TurnID string `json:"turnId,omitempty"` // optional on every event; done uses it to ignore a stale done
	RunID  string `json:"runId,omitempty"`  // tool_call / tool_result: the run whose FIFO pairs id-less results

	Text   string  `json:"text,omitempty"`   // text_delta, reasoning_delta, assistant_message, iteration_output
	Answer *string `json:"answer,omitempty"` // done: the settled final answer (TypeScript's EmitDone.answer)

	Name       string          `json:"name,omitempty"`       // tool_call, subagent, recurse
	Tool       string          `json:"tool,omitempty"`       // permission_request
	Args       json.RawMessage `json:"args,omitempty"`       // tool_call, permission_request
	ToolCallID string          `json:"toolCallId,omitempty"` // permission_request: the tool call it guards

	OK         *bool           `json:"ok,omitempty"`         // tool_result
	Output     json.RawMessage `json:"output,omitempty"`     // tool_result, iteration_output (alias of text)
	Error      *ToolError      `json:"error,omitempty"`      // tool_result
	ExitCode   *int64          `json:"exitCode,omitempty"`   // tool_result
	DurationMs *float64        `json:"durationMs,omitempty"` // tool_result

	Status  string `json:"status,omitempty"`  // subagent, done
	Summary string `json:"summary,omitempty"` // subagent

	CorrelationID string   `json:"correlationId,omitempty"` // recurse, iteration_output
	ParentRunID   string   `json:"parentRunId,omitempty"`   // recurse
	Depth         *int     `json:"depth,omitempty"`         // recurse
	Prompt        string   `json:"prompt,omitempty"`        // recurse
	Metrics       *Metrics `json:"metrics,omitempty"`       // iteration_output

	Entries []PlanEntry `json:"entries,omitempty"` // plan

	Used json.RawMessage `json:"used,omitempty"` // usage
	Size json.RawMessage `json:"size,omitempty"` // usage
	Cost json.RawMessage `json:"cost,omitempty"` // usage

	Message  string `json:"message,omitempty"`  // warning, error, done
	Provider string `json:"provider,omitempty"` // warning
	Reason   string `json:"reason,omitempty"`   // permission_request
	NodeID   string `json:"nodeId,omitempty"`   // error
	Kind     string `json:"kind,omitempty"`     // error: the error's kind, rendered "<kind>: <message>"
}

// ToolError is a failed tool result's error.
type ToolError struct {
	Kind    string `json:"kind,omitempty"`
	Message string `json:"message,omitempty"`
}

// Metrics are a child run's costs, reported with its completion (iteration_output).
type Metrics struct {
	LatencyMs *float64        `json:"latencyMs,omitempty"`
	CostUsd   *float64        `json:"costUsd,omitempty"`
	Tokens    json.RawMessage `json:"tokens,omitempty"` // a number or an object such as {"input":…,"output":…}
}

// PlanEntry is one entry of a plan event, before normalisation.
type PlanEntry struct {
	Content  string `json:"content"`
	Priority string `json:"priority,omitempty"`
	Status   string `json:"status,omitempty"`
}

// Event types an agent prints.
const (
	TypeTextDelta         = "text_delta"
	TypeReasoningDelta    = "reasoning_delta"
	TypeAssistantMessage  = "assistant_message"
	TypeIterationOutput   = "iteration_output"
	TypeToolCall          = "tool_call"
	TypeToolResult        = "tool_result"
	TypeSubagent          = "subagent"
	TypeRecurse           = "recurse"
	TypePlan              = "plan"
	TypeUsage             = "usage"
	TypeWarning           = "warning"
	TypePermissionRequest = "permission_request"
	TypeError             = "error"
	TypeDone              = "done"
)

// Event types the gateway writes to the agent's stdin.
const (
	TypePrompt             = "prompt"
	TypeCancel             = "cancel"
	TypePermissionDecision = "permission_decision"
)

// ErrNotEvent reports a line that is not a JSON object with a string "type".
var ErrNotEvent = errors.New("events: not an event")

// DecodeEvent decodes one stdout line. Surrounding whitespace is allowed; anything else that is not one JSON
// object with a non-empty string "type", or whose known fields have the wrong JSON type, is an error (the
// caller counts it and moves on). An unknown type decodes fine: the translation ignores and counts it.
// Decoding is linear in the line's length; nesting deeper than encoding/json's limit is an error.
func DecodeEvent(line []byte) (Event, error) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return Event{}, ErrNotEvent
	}
	var ev Event
	if err := json.Unmarshal(line, &ev); err != nil {
		return Event{}, fmt.Errorf("%w: %v", ErrNotEvent, err)
	}
	if ev.Type == "" {
		return Event{}, fmt.Errorf("%w: no \"type\"", ErrNotEvent)
	}
	return ev, nil
}
