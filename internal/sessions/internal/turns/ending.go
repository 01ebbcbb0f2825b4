package turns

import (
	"time"

	"github.com/acp-gateway/gateway/internal/translate"
)

// Ending is how a turn ends, read from the agent's stop reason and its call's error: what the session logs
// and lists of it.
type Ending struct {
	Stop, Outcome string
	// CloseReason is why the turn's open tool calls close: cancelled, agent_error, or "" for none.
	CloseReason string
	// Failed is whether the agent's call failed, not after a cancel: the stop reason is then error, never
	// end_turn, so a client that reads only the stop reason sees it failed.
	Failed bool
	Last   *LastTurnView
	// Frame is the `_gateway/turn_ended` params.
	Frame map[string]any
}

// EndOf is how t ends at endedAt, the agent having stopped for agentStop or its call having failed with
// callErr.
func EndOf(t *Turn, agentStop string, callErr error, endedAt time.Time) Ending {
	e := Ending{Stop: translate.ResolveStopReason(agentStop, t.CancelRequested())}
	e.Failed = callErr != nil && !t.CancelRequested()
	if e.Failed {
		e.Stop = translate.StopError
	}
	e.Outcome = translate.OutcomeOf(e.Stop)
	switch {
	case t.CancelRequested():
		e.CloseReason = translate.StopCancelled
	case callErr != nil:
		e.CloseReason = "agent_error"
	}
	e.Last = &LastTurnView{TurnID: t.ID, StopReason: e.Stop, Outcome: e.Outcome, EndedAt: endedAt}
	e.Frame = map[string]any{"turnId": t.ID, "stopReason": e.Stop, "turnOutcome": e.Outcome, "endedAt": endedAt.Format(time.RFC3339Nano)}
	if e.Failed {
		e.Last.Error = ErrorJSON(callErr)
		e.Frame["error"] = e.Last.Error
	}
	if u := t.Usage(); u != nil {
		e.Frame["usage"], e.Last.Usage = u, u
	}
	return e
}
