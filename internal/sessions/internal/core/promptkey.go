package core

import (
	"github.com/acp-gateway/gateway/internal/promptkey"
	"github.com/acp-gateway/gateway/internal/sessions/internal/turns"
)

// A prompt sent with an idempotency key starts at most one turn (turns.Keys): the key is logged (as a digest)
// in the turn's `_gateway/turn_started` frame, so the owner, every follower copy and a restarted owner fold
// the same keys from the same frames.

// keyedTurnLocked is the turn k already started, or nil when k is new. A known key with another prompt is
// ErrIdempotencyKeyReused. A turn no longer the session's running or latest one comes back ended, without
// its text. The caller holds mu.
func (s *Session) keyedTurnLocked(k promptkey.Key) (*turns.Turn, error) {
	return s.state.Keys.Turn(k, s.turnByIDLocked)
}
