package translate

import "encoding/json"

// Note tells the Context about a gateway notification the session logged (`_gateway/turn_started`,
// `_gateway/turn_ended`, `_gateway/permission_resolved`, `_gateway/session_status`, `_gateway/terminal_*`). The snapshot learns
// turn boundaries and outcomes from it: replay leaves out the answers of turns that ended cancelled or
// failed, and only `_gateway/turn_ended` says which did (EndTurn runs before it and knows only whether the
// gateway closed tool calls). Unknown methods and malformed params are ignored: a note never fails.
func (c *Context) Note(method string, params []byte) {
	switch method {
	case "_gateway/terminal_output", "_gateway/terminal_exit":
		c.foldTerminal(method, params)
	case "_gateway/turn_started":
		var p struct {
			TurnID string `json:"turnId"`
		}
		if json.Unmarshal(params, &p) != nil || p.TurnID == "" {
			return
		}
		if c.turn == nil || c.turn.id != p.TurnID {
			c.BeginTurn(p.TurnID)
		}
	case "_gateway/turn_ended":
		var p struct {
			TurnID     string          `json:"turnId"`
			StopReason string          `json:"stopReason"`
			Error      json.RawMessage `json:"error"`
			Usage      json.RawMessage `json:"usage"`
		}
		if json.Unmarshal(params, &p) != nil || p.TurnID == "" {
			return
		}
		c.foldTurnUsage(p.TurnID, p.Usage)
		t := c.turns.lookup(p.TurnID)
		if t == nil {
			return
		}
		if c.turn == t {
			c.EndTurn("")
		}
		t.outcome = outcomeOf(p.StopReason, p.Error)
	}
}

func outcomeOf(stop string, errRaw json.RawMessage) turnOutcome {
	switch {
	case stop == StopCancelled:
		return turnCancelled
	case stop == StopError, len(errRaw) > 0 && string(errRaw) != "null":
		return turnFailed
	default:
		return turnDone
	}
}
