package core

import (
	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/sessions/internal/turns"
	"github.com/acp-gateway/gateway/internal/store"
)

// A session this node ran is stood down when another node took it over while this one was cut off
// (package takeover): it ends here without writing the store again.

// MarkStoodDown marks the session stood down and closing (its agent's exit is expected; no Close will remove
// it from the store), ends a re-attach in progress and asks the running turn to cancel. It returns the agent
// and that turn, for the caller to stop and wait for.
func (c Control) MarkStoodDown() (*agents.Conn, *turns.Turn) {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closing, s.stoodDown = true, true
	conn, t := s.agent.Conn, s.state.Turn
	if s.cancelAttach != nil {
		s.cancelAttach()
	}
	if t != nil {
		t.RequestCancel()
	}
	return conn, t
}

// FailStoodDown ends a stood-down session whose agent stopped: its terminals close, its log states it failed
// for reason and closes, and Closed fires.
func (c Control) FailStoodDown(reason string) {
	s := c.s
	s.svc.CloseTerminals()
	s.mu.Lock()
	s.logStatusLocked(store.StatusFailed, reason)
	s.mu.Unlock()
	s.log.Close()
	s.closeRoot()
	close(s.closed)
}
