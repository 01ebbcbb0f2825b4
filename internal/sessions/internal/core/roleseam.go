package core

import (
	"github.com/acp-gateway/gateway/internal/sessions/internal/pending"
	"github.com/acp-gateway/gateway/internal/store"
)

// What the role code outside the core (the follower, node loss) reads of a session and how it shares its
// lock: a role's own state guarded by the session's mu changes in the same critical section as the core's.

// EndOnce runs end unless an end of the session ran before: a session ends once, by whichever of Close, a
// stand-down or a copy's close comes first.
func (c Control) EndOnce(end func()) { c.s.closeOnce.Do(end) }

// ClosingLocked reports whether the session's end has begun. The caller holds mu.
func (c Control) ClosingLocked() bool { return c.s.closing }

// StatusLocked is the session's status and its reason. The caller holds mu.
func (c Control) StatusLocked() (store.Status, string) { return c.s.state.Status, c.s.state.Reason }

// LastEpoch is lastEpochLocked under mu.
func (c Control) LastEpoch() string {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastEpochLocked()
}

// RequestTurnID is the turn of the pending permission request id, "" when none is pending here.
func (c Control) RequestTurnID(id string) string {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.state.Perms.Get(id); ok {
		return p.TurnID
	}
	return ""
}

// DenyPending is denyPendingLocked under mu.
func (c Control) DenyPending(turnID, by, reason string) []pending.AnswerTo {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.denyPendingLocked(turnID, by, reason)
}

// TakeForkedAt sets the seq of the last frame a fork inherited, as its owner's reply names it: a copy of a
// fork cannot tell from its frames.
func (c Control) TakeForkedAt(seq uint64) {
	s := c.s
	s.mu.Lock()
	s.forkedAt = seq
	s.mu.Unlock()
}
