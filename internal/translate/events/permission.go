package events

import (
	"encoding/json"
)

// Permissions. A permission_request becomes `session/request_permission` with exactly two options,
// allow_once and reject_once (Pixir's decision: no persistent grants). The tool call it shows is the one
// named by toolCallId when given, else `permission-<id>`, with a title and kind from the tool name, its
// locations and rawInput like a tool_call, and the reason as content.
//
// PermissionDecision turns the client's answer into `permission_decision` for the agent. Only the explicit
// selection of the offered allow option allows; a reject, a cancelled outcome, an error, a malformed
// answer, an unknown option id, an id that was never asked (or already answered) and a turn the client
// asked to cancel all deny, with a reason.

// Permission option ids offered to the client.
const (
	OptionAllow  = "allow_once"
	OptionReject = "reject_once"
)

// PermissionAsk is a permission request to send to the client.
type PermissionAsk struct {
	ID     string // the agent's permission id
	Params []byte // `session/request_permission` params
}

type permission struct{}

type permOption struct {
	OptionID string `json:"optionId"`
	Name     string `json:"name"`
	Kind     string `json:"kind"`
}

type permParams struct {
	SessionID string          `json:"sessionId"`
	ToolCall  json.RawMessage `json:"toolCall"`
	Options   []permOption    `json:"options"`
}

func (c *Context) permissionRequest(ev Event) Result {
	if ev.ID == "" {
		c.stats.Unmatched++
		return Result{Ignored: true}
	}
	if _, dup := c.perms[ev.ID]; dup {
		c.stats.Unmatched++
		return Result{Ignored: true}
	}
	c.perms[ev.ID] = &permission{}
	id := ev.ToolCallID
	if id == "" {
		id = "permission-" + ev.ID
	}
	name := ev.Tool
	if name == "" {
		name = ev.Name
	}
	tc := toolUpdate{
		ToolCallID: id,
		Title:      toolTitle(name, ev.Args),
		Kind:       ToolKind(name),
		Status:     "pending",
		Locations:  c.locations(ev.Args),
		RawInput:   rawOrNil(ev.Args),
	}
	if ev.Reason != "" {
		tc.Content = []toolContent{text(ev.Reason)}
	}
	obj := marshal(tc)
	obj = c.clean(stripSessionUpdate(obj))
	p := marshal(permParams{
		SessionID: c.cfg.SessionID,
		ToolCall:  obj,
		Options: []permOption{
			{OptionID: OptionAllow, Name: "Allow once", Kind: "allow_once"},
			{OptionID: OptionReject, Name: "Reject", Kind: "reject_once"},
		},
	})
	return Result{Permission: &PermissionAsk{ID: ev.ID, Params: p}}
}

// stripSessionUpdate removes the empty `"sessionUpdate":""` member a toolUpdate without a variant starts with.
func stripSessionUpdate(obj []byte) []byte {
	const prefix = `{"sessionUpdate":"",`
	if len(obj) > len(prefix) && string(obj[:len(prefix)]) == prefix {
		return append([]byte{'{'}, obj[len(prefix):]...)
	}
	return obj
}

// Decision is the gateway's answer to a permission request.
type Decision struct {
	ID     string `json:"id"`
	Allow  bool   `json:"allow"`
	Reason string `json:"reason,omitempty"`
}

// Line is the `permission_decision` event for the agent's stdin (no trailing newline).
func (d Decision) Line() []byte {
	return marshal(struct {
		Type string `json:"type"`
		Decision
	}{TypePermissionDecision, d})
}

// PermissionDecision maps the client's RequestPermissionResponse (raw JSON) or the error the request ended
// with to a decision, and forgets the request.
func (c *Context) PermissionDecision(id string, result json.RawMessage, err error) Decision {
	if _, ok := c.perms[id]; !ok {
		c.stats.Unmatched++
		return Decision{ID: id, Reason: "unknown permission id"}
	}
	delete(c.perms, id)
	if c.cancelRequested {
		return Decision{ID: id, Reason: "turn cancelled"}
	}
	if err != nil {
		return Decision{ID: id, Reason: "permission request failed"}
	}
	var r struct {
		Outcome *struct {
			Outcome  string `json:"outcome"`
			OptionID string `json:"optionId"`
		} `json:"outcome"`
	}
	if json.Unmarshal(result, &r) != nil || r.Outcome == nil {
		return Decision{ID: id, Reason: "malformed permission response"}
	}
	switch r.Outcome.Outcome {
	case "cancelled":
		return Decision{ID: id, Reason: "cancelled"}
	case "selected":
		switch r.Outcome.OptionID {
		case OptionAllow:
			return Decision{ID: id, Allow: true}
		case OptionReject:
			return Decision{ID: id, Reason: "rejected by the user"}
		default:
			return Decision{ID: id, Reason: "unknown option " + strconvQuote(r.Outcome.OptionID)}
		}
	default:
		return Decision{ID: id, Reason: "malformed permission response"}
	}
}

// PendingPermissions returns the ids of permission requests not yet decided, in no particular order.
func (c *Context) PendingPermissions() []string {
	out := make([]string, 0, len(c.perms))
	for id := range c.perms {
		out = append(out, id)
	}
	return out
}

func strconvQuote(s string) string {
	if len(s) > 64 {
		s = s[:64]
	}
	return string(marshal(s))
}
