package core

import (
	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/sessions/internal/pending"
	"github.com/acp-gateway/gateway/internal/sessions/internal/turns"
	"github.com/acp-gateway/gateway/internal/store"
)

// A detach stops the agent and keeps the session (reattach.go): these are its two state changes, the start
// of the stop and the detached status once the agent is gone.

// BeginDetach marks the session's agent as stopping for a detach, cancels the running turn and denies the
// pending permissions. It returns the agent, its running turn (nil when idle), the answers to deliver, and
// done, which the detach closes once it has ended. ok is false when the session has no agent to detach
// (starting, detached, ended, or closing); when another detach is stopping it, it waits for that one first.
func (c Control) BeginDetach() (conn *agents.Conn, t *turns.Turn, answers []pending.AnswerTo, done chan struct{}, ok bool) {
	s := c.s
	s.mu.Lock()
	if s.stopping {
		// Another detach is stopping the agent: wait for it, so a shutdown returns only once the agent is
		// gone and the status frame is logged (before the shutdown closes the log).
		other := s.detachDone
		s.mu.Unlock()
		<-other
		return nil, nil, nil, nil, false
	}
	if s.closing || (s.state.Status != store.StatusIdle && s.state.Status != store.StatusRunning) {
		s.mu.Unlock()
		return nil, nil, nil, nil, false
	}
	s.stopping = true
	done = make(chan struct{})
	s.detachDone = done // read under mu only while stopping; set again only by the next detach
	conn, t = s.agent.Conn, s.state.Turn
	if t != nil {
		t.RequestCancel()
	}
	answers = s.denyPendingLocked("", "detach", "session detached")
	s.mu.Unlock()
	return conn, t, answers, done, true
}

// EndDetach logs the detached status with reason once the agent is gone, and drops the agent. It reports
// false, and logs nothing, when Close began meanwhile: Close, which waited for the same turn, reports the end.
func (c Control) EndDetach(reason string) bool {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopping = false
	if s.closing {
		return false
	}
	s.agent.Conn = nil
	s.lastActive = s.host.Now()
	s.logStatusLocked(store.StatusDetached, reason)
	return true
}
