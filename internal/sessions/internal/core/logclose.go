package core

import (
	"errors"

	"github.com/acp-gateway/gateway/internal/store"
	"github.com/google/uuid"
)

// LogClosing says how a log left open is closed: who denies its pending requests (permission_resolved.by)
// and why, the error its open turn ends with, and the status it ends in.
type LogClosing struct {
	By       string
	Deny     string
	TurnText string
	Status   store.Status // unless the log already says failed
	Reason   string
	// ReviveFrom: a log closed as failed with this reason comes back detached with reason, in its epoch; ""
	// revives none.
	ReviveFrom string
}

// closeOpenLog appends to a session rebuilt from the store, not shared, what closes its log as c says, and
// returns the head before; appended is false when there was nothing to close. An open log (a turn, a pending
// request or a live status) closes in a new epoch: the denials, the turn's end and the status.
func (s *Session) closeOpenLog(c LogClosing) (head uint64, appended bool) {
	s.mu.Lock()
	head = s.log.Head()
	t := s.turn
	if t == nil && s.perms.Len() == 0 && (s.status == store.StatusDetached || s.status == store.StatusFailed) {
		if c.ReviveFrom == "" || s.status != store.StatusFailed || s.statusReason != c.ReviveFrom {
			s.mu.Unlock()
			return head, false
		}
		s.logStatusLocked(store.StatusDetached, c.Reason)
		s.mu.Unlock()
		return head, true
	}
	s.Epoch = uuid.NewString() // the session is not shared: nothing reads Epoch concurrently
	answers := s.denyPendingLocked("", c.By, c.Deny)
	s.mu.Unlock()
	Deliver(answers) // restored requests have no agent waiting; their answer channels take it
	if t != nil {
		s.finishTurn(t, "end_turn", errors.New(c.TurnText), "")
	}
	s.mu.Lock()
	if s.status != store.StatusFailed {
		s.logStatusLocked(c.Status, c.Reason)
	}
	s.mu.Unlock()
	return head, true
}
