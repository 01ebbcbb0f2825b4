package core

import "github.com/acp-gateway/gateway/internal/store"

// What the role code outside the core (the follower, node loss) reads of a session and how it shares its
// lock: a role's own state guarded by the session's mu changes in the same critical section as the core's.

// endOnce runs end unless an end of the session ran before: a session ends once, by whichever of Close, a
// stand-down or a copy's close comes first.
func (s *Session) endOnce(end func()) { s.closeOnce.Do(end) }

// closingLocked reports whether the session's end has begun. The caller holds mu.
func (s *Session) closingLocked() bool { return s.closing }

// statusLocked is the session's status and its reason. The caller holds mu.
func (s *Session) statusLocked() (store.Status, string) { return s.status, s.statusReason }

// lastEpoch is lastEpochLocked under mu.
func (s *Session) lastEpoch() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastEpochLocked()
}

// requestTurnID is the turn of the pending permission request id, "" when none is pending here.
func (s *Session) requestTurnID(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.perms.Get(id); ok {
		return p.TurnID
	}
	return ""
}

// denyPending is denyPendingLocked under mu.
func (s *Session) denyPending(turnID, by, reason string) []AnswerTo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.denyPendingLocked(turnID, by, reason)
}

// takeForkedAt sets the seq of the last frame a fork inherited, as its owner's reply names it: a copy of a
// fork cannot tell from its frames.
func (s *Session) takeForkedAt(seq uint64) {
	s.mu.Lock()
	s.forkedAt = seq
	s.mu.Unlock()
}
