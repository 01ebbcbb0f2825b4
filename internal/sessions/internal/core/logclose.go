package core

import (
	"errors"

	"github.com/acp-gateway/gateway/internal/sessions/internal/pending"
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

// CloseOpenLog appends to a session rebuilt from the store, not shared, what closes its log as lc says, and
// returns the head before; appended is false when there was nothing to close. An open log (a turn, a pending
// request or a live status) closes in a new epoch: the denials, the turn's end and the status.
func (c Control) CloseOpenLog(lc LogClosing) (head uint64, appended bool) {
	s := c.s
	s.mu.Lock()
	head = s.log.Head()
	t := s.state.Turn
	if t == nil && s.state.Perms.Len() == 0 && (s.state.Status == store.StatusDetached || s.state.Status == store.StatusFailed) {
		if lc.ReviveFrom == "" || s.state.Status != store.StatusFailed || s.state.Reason != lc.ReviveFrom {
			s.mu.Unlock()
			return head, false
		}
		s.logStatusLocked(store.StatusDetached, lc.Reason)
		s.mu.Unlock()
		return head, true
	}
	s.Epoch = uuid.NewString() // the session is not shared: nothing reads Epoch concurrently
	answers := s.denyPendingLocked("", lc.By, lc.Deny)
	s.mu.Unlock()
	pending.Deliver(answers) // restored requests have no agent waiting; their answer channels take it
	if t != nil {
		s.finishTurn(t, "end_turn", errors.New(lc.TurnText), "")
	}
	s.mu.Lock()
	if s.state.Status != store.StatusFailed {
		s.logStatusLocked(lc.Status, lc.Reason)
	}
	s.mu.Unlock()
	return head, true
}
