package core

import (
	"context"
	"encoding/json"

	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/promptkey"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/sessions/internal/turns"
	"github.com/acp-gateway/gateway/internal/store"
)

// PromptHereLocked starts a turn on the session this node runs, or says by its status why it takes none now;
// a detached session goes to reattach, which re-attaches it and starts the turn. The caller holds mu, which
// it releases (reattach too).
func (c Control) PromptHereLocked(ctx context.Context, who principal.Principal, blocks []json.RawMessage, turnID string, key promptkey.Key, reattach func() (*turns.Turn, error)) (*turns.Turn, error) {
	s := c.s
	if err := s.state.Ended(); err != nil {
		s.mu.Unlock()
		return nil, err
	}
	switch s.state.Status {
	case store.StatusStarting:
		s.mu.Unlock()
		if s.reattachingNow() {
			return nil, turns.RunningError(nil) // the prompt that re-attaches the session is this session's turn
		}
		return nil, sessionerr.ErrNotReady
	case store.StatusRunning:
		err := turns.RunningError(s.state.Turn)
		s.mu.Unlock()
		return nil, err
	case store.StatusDetached:
		return reattach() // unlocks mu
	}
	if s.stopping {
		s.mu.Unlock()
		return nil, sessionerr.ErrDetached
	}
	return s.beginTurnLocked(ctx, who, blocks, turnID, key), nil // unlocks mu
}
