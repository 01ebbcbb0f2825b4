package turns

import (
	"github.com/acp-gateway/gateway/internal/agentusage"
	"github.com/acp-gateway/gateway/internal/sessions/internal/pending"
)

// Where a turn stands for a client that waits on it (REST `?wait=true`).
const (
	TurnEnded              = "ended"
	TurnAwaitingPermission = "awaiting_permission"
	// TurnAwaitingElicitation is a running turn whose agent waits for a user to answer an elicitation.
	TurnAwaitingElicitation = "awaiting_elicitation"
	TurnRunning             = "running"
)

// TurnState is a turn as a waiting client sees it: ended (StopReason set), stopped on permission requests that
// only a user can answer (Permissions set), or still running. Text is the turn's agent text so far.
type TurnState struct {
	TurnID      string                   `json:"turnId"`
	Status      string                   `json:"status"`
	StopReason  string                   `json:"stopReason,omitempty"`
	Outcome     string                   `json:"turnOutcome,omitempty"` // set once ended: completed, cancelled or failed
	Text        string                   `json:"text"`
	Truncated   bool                     `json:"truncated"`
	Usage       *agentusage.Turn         `json:"usage,omitempty"` // set once ended, when the agent reported it
	Permissions []pending.PermissionView `json:"permissions,omitempty"`
	// Elicitations are the turn's pending elicitations (status awaiting_elicitation, or alongside permissions).
	Elicitations []pending.ElicitationView `json:"elicitations,omitempty"`
	// Err is the agent's failure of an ended turn (see TurnResult.Err).
	Err error `json:"-"`
}

// State is t's state given the session's pending requests and, while it runs without a question for the
// user, the channel closed when it asks one. The caller holds the session's lock.
func State(t *Turn, perms *pending.Table) (TurnState, <-chan struct{}) {
	select {
	case <-t.done: // closed under the session's lock by End, together with result
		r := t.result
		return TurnState{TurnID: t.ID, Status: TurnEnded, StopReason: r.StopReason, Outcome: r.Outcome, Text: r.Text, Truncated: r.Truncated, Usage: r.Usage, Err: r.Err}, nil
	default:
	}
	st := TurnState{TurnID: t.ID, Status: TurnRunning, Text: t.text.String(), Truncated: t.textTruncated}
	for _, p := range perms.PermissionViews() {
		if p.TurnID == t.ID {
			st.Permissions = append(st.Permissions, p)
		}
	}
	for _, e := range perms.ElicitationViews() {
		if e.TurnID == t.ID {
			st.Elicitations = append(st.Elicitations, e)
		}
	}
	switch {
	case len(st.Permissions) > 0:
		st.Status = TurnAwaitingPermission
		return st, nil
	case len(st.Elicitations) > 0:
		st.Status = TurnAwaitingElicitation
		return st, nil
	}
	return st, t.asked
}
