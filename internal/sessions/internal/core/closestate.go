package core

import (
	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/sessions/internal/pending"
	"github.com/acp-gateway/gateway/internal/sessions/internal/turns"
	"github.com/acp-gateway/gateway/internal/store"
)

// Closing the session this node runs (runner_local.go): its state changes, in order.

// BeginClose marks the session closing: a re-attach in progress is cut short, the running turn cancelled and
// the pending permissions denied. It returns the agent (nil while starting: the start sees closing and stops
// its agent itself), the running turn, whether the agent could take requests, and the answers to deliver.
func (c Control) BeginClose() (conn *agents.Conn, t *turns.Turn, wasUsable bool, answers []pending.AnswerTo) {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closing = true
	conn = s.agent.Conn
	if s.cancelAttach != nil {
		s.cancelAttach() // a re-attach stops its agent at once rather than after the agent's load
	}
	t = s.state.Turn
	if t != nil {
		t.RequestCancel()
	}
	wasUsable = s.state.Status == store.StatusIdle || s.state.Status == store.StatusRunning
	answers = s.denyPendingLocked("", "close", "session closed")
	return conn, t, wasUsable, answers
}

// LogClosed logs the closed status with reason, the log's last frame.
func (c Control) LogClosed(reason string) {
	s := c.s
	s.mu.Lock()
	s.logStatusLocked(store.StatusClosed, reason)
	s.mu.Unlock()
}

// FinishClose closes the log and the cwd, then Closed: what is left of a closed session is its record.
func (c Control) FinishClose() {
	s := c.s
	s.log.Close()
	s.closeRoot()
	close(s.closed)
}
