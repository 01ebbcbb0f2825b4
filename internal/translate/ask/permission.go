package ask

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/acp-gateway/gateway/internal/translate/rawjson"
)

// PermissionOption is one option an agent offered in `session/request_permission`.
type PermissionOption struct {
	OptionID string `json:"optionId"`
	Name     string `json:"name"`
	Kind     string `json:"kind"`
}

// Allows reports whether selecting this option lets the tool call run. Only the two allow kinds do: an
// unknown kind from a newer protocol is treated as a denial (default-deny).
func (o PermissionOption) Allows() bool { return o.Kind == "allow_once" || o.Kind == "allow_always" }

// PermissionRequest is the part of an agent's permission request the gateway interprets. ToolCall stays raw.
type PermissionRequest struct {
	ToolCall json.RawMessage    `json:"toolCall"`
	Options  []PermissionOption `json:"options"`
}

// ParsePermissionRequest decodes an agent's `session/request_permission` params. A request without options
// or without a tool call id cannot be answered meaningfully and is an error (the gateway then denies it).
func ParsePermissionRequest(params json.RawMessage) (PermissionRequest, error) {
	params = rawjson.ValidUTF8(params) // ToolCall stays raw and is shown to clients
	var req PermissionRequest
	if err := json.Unmarshal(params, &req); err != nil {
		return PermissionRequest{}, fmt.Errorf("permission request: %w", err)
	}
	if len(req.Options) == 0 {
		return req, errors.New("permission request offers no options")
	}
	var tc struct {
		ToolCallID string `json:"toolCallId"`
	}
	if err := json.Unmarshal(req.ToolCall, &tc); err != nil || tc.ToolCallID == "" {
		return req, errors.New("permission request has no toolCall.toolCallId")
	}
	return req, nil
}

// Option returns the offered option with the given id.
func (r PermissionRequest) Option(id string) (PermissionOption, bool) {
	for _, o := range r.Options {
		if o.OptionID == id {
			return o, true
		}
	}
	return PermissionOption{}, false
}

// FirstOfKind returns the first offered option whose kind is one of kinds, in the order of kinds. The gateway
// never picks an option by a hard-coded id: ids are the agent's business, kinds are the protocol's.
func (r PermissionRequest) FirstOfKind(kinds ...string) (PermissionOption, bool) {
	for _, k := range kinds {
		for _, o := range r.Options {
			if o.Kind == k {
				return o, true
			}
		}
	}
	return PermissionOption{}, false
}

// Outcome is the gateway's decision on a question it put to users for an agent: for a permission request a
// selected option id, or cancelled; for an elicitation (Action set) accept with its content, decline or cancel.
type Outcome struct {
	Selected string // option id; empty means cancelled
	Allowed  bool   // the selected option is of an allow kind; an elicitation was accepted
	Reason   string // why the gateway decided, for denials it made on its own
	// Action is an elicitation's answer: accept, decline or cancel; Content the accepted form's values.
	Action  string          `json:",omitempty"`
	Content json.RawMessage `json:",omitempty"`
}

// MarshalResult encodes the ACP `RequestPermissionResponse` (or, for an elicitation,
// `CreateElicitationResponse`) for the agent. Never a zero-value union.
func (o Outcome) MarshalResult() json.RawMessage {
	if o.Action != "" {
		m := map[string]any{"action": o.Action}
		if o.Action == "accept" && len(o.Content) > 0 {
			m["content"] = o.Content
		}
		b, _ := json.Marshal(m)
		return b
	}
	if o.Selected == "" {
		return json.RawMessage(`{"outcome":{"outcome":"cancelled"}}`)
	}
	b, _ := json.Marshal(map[string]any{"outcome": map[string]string{"outcome": "selected", "optionId": o.Selected}})
	return b
}

// ClientJSON is the outcome as clients see it in `_gateway/permission_resolved`.
func (o Outcome) ClientJSON() map[string]any {
	if o.Action != "" {
		m := map[string]any{"action": o.Action}
		if o.Action == "accept" && len(o.Content) > 0 {
			m["content"] = o.Content
		}
		if o.Reason != "" {
			m["reason"] = o.Reason
		}
		return m
	}
	m := map[string]any{"outcome": "cancelled"}
	if o.Selected != "" {
		m = map[string]any{"outcome": "selected", "optionId": o.Selected}
	}
	m["allowed"] = o.Allowed
	if o.Reason != "" {
		m["reason"] = o.Reason
	}
	return m
}

// Deny returns the denial the gateway sends when it must decide on its own (cancel, close, deadline, agent
// exit, a malformed answer): the agent's reject option if it offered one, else `cancelled`.
func (r PermissionRequest) Deny(reason string) Outcome {
	if o, ok := r.FirstOfKind("reject_once", "reject_always"); ok {
		return Outcome{Selected: o.OptionID, Reason: reason}
	}
	return Outcome{Reason: reason}
}

// Allow returns the allow decision for a policy that auto-approves: allow_once preferred, so a policy never
// widens into a persistent grant on the agent's side.
func (r PermissionRequest) Allow() (Outcome, bool) {
	o, ok := r.FirstOfKind("allow_once", "allow_always")
	if !ok {
		return Outcome{}, false
	}
	return Outcome{Selected: o.OptionID, Allowed: true}, true
}

// ErrUnknownOption is returned by Select for an option id the agent did not offer.
var ErrUnknownOption = errors.New("option not offered by the agent")

// Select maps a client's explicit choice to an outcome. Only an offered option of an allow kind allows.
func (r PermissionRequest) Select(optionID string) (Outcome, error) {
	o, ok := r.Option(optionID)
	if !ok {
		return Outcome{}, ErrUnknownOption
	}
	return Outcome{Selected: o.OptionID, Allowed: o.Allows()}, nil
}

// ClientAnswer is a client's JSON-RPC result for a request the gateway put to it: for a permission request
// `{"outcome":{"outcome":"selected","optionId":…}}` or `{"outcome":{"outcome":"cancelled"}}`, for an
// elicitation `{"action":"accept","content":{…}}`, `{"action":"decline"}` or `{"action":"cancel"}`.
type ClientAnswer struct {
	Outcome struct {
		Outcome  string `json:"outcome"`
		OptionID string `json:"optionId"`
	} `json:"outcome"`
	Action  string          `json:"action,omitempty"`
	Content json.RawMessage `json:"content,omitempty"`
	// For names the kind of request the answer is meant for ("permission" or "elicitation"), when the face
	// knows it (REST routes); "" answers whatever request has the id (a JSON-RPC response).
	For string `json:"for,omitempty"`
}

// FailedAnswer is a client's JSON-RPC error response to a request: it denies a permission and declines an
// elicitation.
func FailedAnswer() ClientAnswer {
	var a ClientAnswer
	a.Outcome.Outcome, a.Action = "cancelled", "decline"
	return a
}

// Decide maps a client's answer to an outcome: a selected, offered option as chosen; cancelled as a plain
// cancelled outcome; anything else is an error the caller reports without resolving the request.
func (r PermissionRequest) Decide(a ClientAnswer) (Outcome, error) {
	switch a.Outcome.Outcome {
	case "selected":
		return r.Select(a.Outcome.OptionID)
	case "cancelled":
		return Outcome{Reason: "cancelled by client"}, nil
	default:
		return Outcome{}, fmt.Errorf("outcome must be \"selected\" or \"cancelled\", got %q", a.Outcome.Outcome)
	}
}
