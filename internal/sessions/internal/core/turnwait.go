package core

import (
	"context"

	"github.com/acp-gateway/gateway/internal/agentusage"
	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/translate/ask"
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
	TurnID      string           `json:"turnId"`
	Status      string           `json:"status"`
	StopReason  string           `json:"stopReason,omitempty"`
	Outcome     string           `json:"turnOutcome,omitempty"` // set once ended: completed, cancelled or failed
	Text        string           `json:"text"`
	Truncated   bool             `json:"truncated"`
	Usage       *agentusage.Turn `json:"usage,omitempty"` // set once ended, when the agent reported it
	Permissions []PermissionView `json:"permissions,omitempty"`
	// Elicitations are the turn's pending elicitations (status awaiting_elicitation, or alongside permissions).
	Elicitations []ElicitationView `json:"elicitations,omitempty"`
	// Err is the agent's failure of an ended turn (see TurnResult.Err).
	Err error `json:"-"`
}

// notifyAskedLocked wakes the turn's waiters: one of its permission requests now waits for a user. The caller
// holds the session's mu.
func (t *Turn) notifyAskedLocked() {
	close(t.asked)
	t.asked = make(chan struct{})
}

// LatestTurn is the running turn, else the last one that ran.
func (s *Session) LatestTurn() (*Turn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.latest == nil {
		return nil, sessionerr.ErrNoTurnYet
	}
	return s.latest, nil
}

// TurnState reports where t stands now, without waiting.
func (s *Session) TurnState(t *Turn) TurnState {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, _ := s.turnStateLocked(t)
	return st
}

// turnStateLocked is t's state and, while it runs without a question for the user, the channel closed when it
// asks one. The caller holds mu.
func (s *Session) turnStateLocked(t *Turn) (TurnState, <-chan struct{}) {
	select {
	case <-t.done: // closed under mu by finishTurn, together with result
		r := t.result
		return TurnState{TurnID: t.ID, Status: TurnEnded, StopReason: r.StopReason, Outcome: r.Outcome, Text: r.Text, Truncated: r.Truncated, Usage: r.Usage, Err: r.Err}, nil
	default:
	}
	st := TurnState{TurnID: t.ID, Status: TurnRunning, Text: t.text.String(), Truncated: t.textTruncated}
	for _, p := range s.perms.PermissionViews() {
		if p.TurnID == t.ID {
			st.Permissions = append(st.Permissions, p)
		}
	}
	for _, e := range s.perms.ElicitationViews() {
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

// AwaitTurn waits until t ends or one of its permission requests waits for a user, whichever is first; requests
// the session's policy answers never stop it. When ctx ends first it returns the state at that moment (usually
// running) and ctx's error; the turn goes on. It waits on the turn's own signals: no polling, and nothing is
// left behind when it returns.
func (s *Session) AwaitTurn(ctx context.Context, t *Turn) (TurnState, error) {
	for {
		s.mu.Lock()
		st, asked := s.turnStateLocked(t)
		s.mu.Unlock()
		if asked == nil {
			return st, nil
		}
		select {
		case <-t.done:
		case <-asked:
		case <-ctx.Done():
			return s.TurnState(t), ctx.Err()
		}
	}
}

// AnswerInTurn is Answer that also returns the turn the request belongs to, for a client that goes on waiting
// on it. A pending request always belongs to the running turn: requests outside a turn, or of a turn that
// ended, are resolved at once.
func (s *Session) AnswerInTurn(permissionID string, a ask.ClientAnswer, by string) (ask.Outcome, *Turn, error) {
	return s.answer(principal.Principal{}, permissionID, a, by)
}
