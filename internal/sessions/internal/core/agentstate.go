package core

import (
	"context"
	"encoding/json"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/store"
)

// What the session knows of its agent: what it answered to initialize, the agent session it opened, and the
// process that runs it now. The local runner (lifecycle.go, reattach.go) sets them through these methods.

// noteInitialize records an agent's initialize answer and what it says about taking a session back.
func (s *Session) noteInitialize(info, caps, authMethods json.RawMessage, canLoad, canResume bool) {
	s.mu.Lock()
	s.initInfo.AgentInfo, s.initInfo.AgentCapabilities, s.initInfo.AuthMethods = info, caps, authMethods
	s.canLoad, s.canResume = canLoad, canResume
	s.mu.Unlock()
}

// setLoginSecrets records the login values the agent is started with, to scrub them from what it says.
func (s *Session) setLoginSecrets(secrets []string) {
	s.mu.Lock()
	s.loginSecrets = secrets
	s.mu.Unlock()
}

// agentCapabilities are the agentCapabilities the agent answered at its last start here, nil before one.
func (s *Session) agentCapabilities() json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.initInfo.AgentCapabilities
}

// agentCapabilitiesLocked is agentCapabilities with mu held.
func (s *Session) agentCapabilitiesLocked() json.RawMessage { return s.initInfo.AgentCapabilities }

// agentSession is the agent's session id, "" before the agent opened it. It is set once before the session
// is usable and never changes (a re-attach loads the same one), so code on a usable session reads it
// without mu.
func (s *Session) agentSession() string { return s.agentSID }

// agentOpened is the agent's session id and capabilities, read together: what deleting its copy needs.
func (s *Session) agentOpened() (agentSID string, caps json.RawMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.agentSID, s.initInfo.AgentCapabilities
}

// resumeInfo is how a re-attach takes the agent session back: whether the agent loads or resumes, and which.
func (s *Session) resumeInfo() (canLoad, canResume bool, agentSID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.canLoad, s.canResume, s.agentSID
}

// clientMCPServers are the MCP servers the client added, read as an agent's start reads them: they change
// only while the session is detached and no agent starts.
func (s *Session) clientMCPServers() []agents.MCPServer { return s.clientMCP }

// newReadyGate holds the agent's updates that follow its session/new answer until release (status.go).
func (s *Session) newReadyGate() *ReadyGate {
	g := &ReadyGate{open: make(chan struct{})}
	s.ready.Store(g)
	return g
}

// attachAgent makes conn, which opened agentSID, the session's agent, and a starting session idle. It
// attaches nothing (attached false) once Close or shutdown (the end of stopping) has begun. ready reports
// that the session_ready frame was logged, which notes the directory entry too.
func (s *Session) attachAgent(conn *agents.Conn, agentSID string, modes, configOptions json.RawMessage, stopping context.Context) (attached, ready bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing || stopping.Err() != nil {
		return false, false
	}
	s.conn, s.agentSID = conn, agentSID
	s.modes, s.configOptions = modes, configOptions
	ready = s.status == store.StatusStarting
	if ready {
		s.logReadyLocked()
	}
	return true, ready
}

// agentIsCurrent reports whether conn is the session's agent and its exit would be unexpected.
func (s *Session) agentIsCurrent(conn *agents.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.agentIsCurrentLocked(conn)
}

// agentIsCurrentLocked is agentIsCurrent with mu held.
func (s *Session) agentIsCurrentLocked(conn *agents.Conn) bool {
	return s.conn == conn && !s.closing && !s.stopping && (s.status == store.StatusIdle || s.status == store.StatusRunning)
}

// markAgentFailed fails the session whose agent conn went away: pending permissions are denied (the answers
// to deliver) and the failed status is logged. ok is false when conn is no longer the session's agent.
func (s *Session) markAgentFailed(conn *agents.Conn, reason string) (answers []AnswerTo, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.agentIsCurrentLocked(conn) {
		return nil, false
	}
	answers = s.denyPendingLocked("", "agent_exit", "agent exited")
	s.logStatusLocked(store.StatusFailed, reason)
	return answers, true
}

// closeTerminals closes the terminals the gateway runs for the agent; killTerminals kills them. Either once
// the agent that used them is gone.
func (s *Session) closeTerminals() { s.svc.CloseTerminals() }

func (s *Session) killTerminals() { s.svc.KillTerminals() }
