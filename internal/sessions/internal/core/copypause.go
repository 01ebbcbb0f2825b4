package core

import (
	"time"

	"github.com/acp-gateway/gateway/internal/sessions/internal/cold"
)

// A copy nobody uses is paused: it goes cold, keeping its frames, and lists what it folded until its next
// use feeds it again (package follow).

// NoteUsed notes a face's use of the session at now: a copy in use is not paused.
func (c Control) NoteUsed(now time.Time) {
	s := c.s
	s.mu.Lock()
	s.lastActive = now
	s.mu.Unlock()
}

// UnusedSinceLocked reports whether nobody used the live session since cutoff: no subscriber, no turn, not
// closing. The caller holds mu.
func (c Control) UnusedSinceLocked(cutoff time.Time) bool {
	return c.s.cold == nil && !c.s.closing && c.s.clients <= 0 && c.s.state.Turn == nil && c.s.lastActive.Before(cutoff)
}

// PauseCopyLocked makes a live copy cold: it lists what its frames folded. The caller holds mu.
func (c Control) PauseCopyLocked() {
	s := c.s
	s.cold = &cold.State{}
	s.listFoldedLocked(s.cold)
}

// RelistPausedCopy lists on a paused copy what it folded by now: its feed may have applied a frame while it
// stopped. A copy used again meanwhile is left alone.
func (c Control) RelistPausedCopy() {
	s := c.s
	s.mu.Lock()
	if c := s.cold; c != nil {
		s.listFoldedLocked(c)
	}
	s.mu.Unlock()
}

// listFoldedLocked sets what c lists to the session's folded state. The caller holds mu.
func (s *Session) listFoldedLocked(c *cold.State) {
	_, c.LastSeq = s.log.Bounds()
	c.Title, c.LastTurn, c.Status, c.Reason = s.tctx.Title(), s.state.LastTurn, s.state.Status, s.state.Reason
}

// WarmCopyLocked makes a cold copy live once its feed has read the stored log: it streams in the epoch its
// frames carry (nobody streams a cold session yet). The caller holds mu.
func (c Control) WarmCopyLocked() {
	s := c.s
	if n := len(s.state.Epochs); n > 0 {
		s.Epoch = s.state.Epochs[n-1].Epoch
	}
	s.cold = nil
}
