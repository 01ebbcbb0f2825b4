package core

import (
	"encoding/json"

	"github.com/acp-gateway/gateway/internal/store"
)

// DirEntry is the session's directory entry as the session knows it, its state read at one instant under mu.
// The store link adds what it alone knows: the owner, the incarnation, the time and whether the entry is
// clean.
func (c Control) DirEntry() store.DirEntry {
	s := c.s
	s.mu.Lock()
	dv := s.agent.DirView()
	var head uint64
	if c := s.cold; c != nil {
		dv.Title, dv.LastTurn, head = c.Title, c.LastTurn, c.LastSeq
	} else {
		dv.Title, dv.LastTurn, head = s.tctx.Title(), s.state.LastTurn, s.log.Head()
	}
	e := store.DirEntry{
		ID: s.ID, Agent: s.Agent, Cwd: s.Cwd, AdditionalDirs: s.AdditionalDirs, Policy: s.Policy, CreatedAt: s.CreatedAt,
		Status: s.state.Status, Reason: s.state.Reason,
		Epoch: s.Epoch, AgentSessionID: s.agent.SID, CanLoad: s.agent.CanLoad, CanResume: s.agent.CanResume,
		LastSeq: head,
	}
	clientMCP := s.clientMCP // written under mu by AttachMCP
	s.mu.Unlock()
	e.View, _ = json.Marshal(dv)
	if !s.Owner.IsZero() {
		o := s.Owner
		e.Principal = &o
	}
	if sh := s.Shares(); len(sh) > 0 {
		e.Shares = sh
	}
	if len(clientMCP) > 0 {
		e.ClientMCP, _ = json.Marshal(clientMCP)
	}
	return e
}
