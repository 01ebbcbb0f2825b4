package core

import (
	"github.com/acp-gateway/gateway/internal/sessions/internal/cold"
	"github.com/acp-gateway/gateway/internal/sessions/internal/views"
	"github.com/acp-gateway/gateway/internal/store"
)

// ColdFromEntry makes a new session, not yet shared, the cold session its directory entry e (revision rev,
// view dv) lists: detached, or failed when e says so, with e's agent session, shares and view. Its first use
// loads the log.
func (c Control) ColdFromEntry(e store.DirEntry, dv views.DirView, rev uint64) {
	s := c.s
	s.Epoch, s.CreatedAt = e.Epoch, e.CreatedAt
	s.agent.TakeEntry(e, dv)
	s.state.Status, s.state.Reason = store.StatusDetached, e.Reason
	if e.Status == store.StatusFailed {
		s.state.Status = store.StatusFailed
	}
	for _, sh := range e.Shares {
		s.shares.Set(sh.Principal, sh.Role)
	}
	s.cold = &cold.State{Title: dv.Title, LastTurn: dv.LastTurn, LastSeq: e.LastSeq, Status: s.state.Status, Reason: s.state.Reason, Rev: rev}
}
