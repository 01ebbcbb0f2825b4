package core

import (
	"context"

	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/sessions/internal/turns"
	"github.com/acp-gateway/gateway/internal/translate/ask"
)

// LatestTurn is the running turn, else the last one that ran.
func (s *Session) LatestTurn() (*turns.Turn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state.Latest == nil {
		return nil, sessionerr.ErrNoTurnYet
	}
	return s.state.Latest, nil
}

// TurnState reports where t stands now, without waiting.
func (s *Session) TurnState(t *turns.Turn) turns.TurnState {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, _ := s.turnStateLocked(t)
	return st
}

// turnStateLocked is t's state and, while it runs without a question for the user, the channel closed when it
// asks one (turns.State). The caller holds mu.
func (s *Session) turnStateLocked(t *turns.Turn) (turns.TurnState, <-chan struct{}) {
	return turns.State(t, &s.state.Perms)
}

// AwaitTurn waits until t ends or one of its permission requests waits for a user, whichever is first; requests
// the session's policy answers never stop it. When ctx ends first it returns the state at that moment (usually
// running) and ctx's error; the turn goes on. It waits on the turn's own signals: no polling, and nothing is
// left behind when it returns.
func (s *Session) AwaitTurn(ctx context.Context, t *turns.Turn) (turns.TurnState, error) {
	for {
		s.mu.Lock()
		st, asked := s.turnStateLocked(t)
		s.mu.Unlock()
		if asked == nil {
			return st, nil
		}
		select {
		case <-t.Done():
		case <-asked:
		case <-ctx.Done():
			return s.TurnState(t), ctx.Err()
		}
	}
}

// AnswerInTurn is Answer that also returns the turn the request belongs to, for a client that goes on waiting
// on it. A pending request always belongs to the running turn: requests outside a turn, or of a turn that
// ended, are resolved at once.
func (s *Session) AnswerInTurn(permissionID string, a ask.ClientAnswer, by string) (ask.Outcome, *turns.Turn, error) {
	return s.answer(principal.Principal{}, permissionID, a, by)
}
