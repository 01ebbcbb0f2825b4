package turns

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/acp-gateway/gateway/internal/agentusage"
	acp "github.com/coder/acp-go-sdk"
)

// Caller is the agent a turn's `session/prompt` goes to.
type Caller interface {
	Call(ctx context.Context, method string, params any) (json.RawMessage, error)
}

// Answer is the agent's answer to a turn's `session/prompt`.
type Answer struct {
	StopReason string
	Usage      *agentusage.Turn
	// UsageMalformed says the answer carried a usage it could not read (Usage is nil then).
	UsageMalformed bool
	Err            error
}

// Prompt sends the turn's `session/prompt` for agentSID with blocks and waits for the agent's answer. The call
// runs with a context that is never cancelled: cancelling it would make the SDK discard the agent's real
// answer (a cancel is a `session/cancel` notification instead).
func (t *Turn) Prompt(agent Caller, agentSID string, blocks []json.RawMessage) Answer {
	params := map[string]any{"sessionId": agentSID, "prompt": blocks}
	if meta := t.span.Meta(); meta != nil {
		params["_meta"] = meta // traceparent: the agent's own spans join the turn's trace
	}
	res, err := agent.Call(context.Background(), acp.AgentMethodSessionPrompt, params)
	t.span.Answered(res)
	var r struct {
		StopReason string `json:"stopReason"`
	}
	if err == nil {
		if uerr := json.Unmarshal(res, &r); uerr != nil {
			err = fmt.Errorf("malformed session/prompt response: %w", uerr)
		}
	}
	a := Answer{StopReason: r.StopReason, Err: err}
	if err == nil {
		var ok bool
		a.Usage, ok = agentusage.OfPrompt(res)
		a.UsageMalformed = !ok
	}
	return a
}
