package core

import (
	"context"
	"encoding/json"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/sessions/internal/agentlink"
	"github.com/acp-gateway/gateway/internal/sessions/internal/pending"
	"github.com/acp-gateway/gateway/internal/store"
)

// What the session knows of its agent: what it answered to initialize, the agent session it opened, and the
// process that runs it now. The local runner (lifecycle.go, reattach.go) sets them through these methods.

// NoteInitialize records an agent's initialize answer and what it says about taking a session back.
func (c Control) NoteInitialize(info, caps, authMethods json.RawMessage, canLoad, canResume bool) {
	s := c.s
	s.mu.Lock()
	s.agent.NoteInitialize(info, caps, authMethods, canLoad, canResume)
	s.mu.Unlock()
}

// SetLoginSecrets records the login values the agent is started with, to scrub them from what it says.
func (c Control) SetLoginSecrets(secrets []string) {
	s := c.s
	s.mu.Lock()
	s.agent.Secrets = secrets
	s.mu.Unlock()
}

// AgentCapabilities are the agentCapabilities the agent answered at its last start here, nil before one.
func (c Control) AgentCapabilities() json.RawMessage {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.agent.Caps
}

// AgentCapabilitiesLocked is AgentCapabilities with mu held.
func (c Control) AgentCapabilitiesLocked() json.RawMessage { return c.s.agent.Caps }

// AgentSession is the agent's session id, "" before the agent opened it. It is set once before the session
// is usable and never changes (a re-attach loads the same one), so code on a usable session reads it
// without mu.
func (c Control) AgentSession() string { return c.s.agent.SID }

// AgentOpened is the agent's session id and capabilities, read together: what deleting its copy needs.
func (c Control) AgentOpened() (agentSID string, caps json.RawMessage) {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.agent.SID, s.agent.Caps
}

// ResumeInfo is how a re-attach takes the agent session back: whether the agent loads or resumes, and which.
func (c Control) ResumeInfo() (canLoad, canResume bool, agentSID string) {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.agent.CanLoad, s.agent.CanResume, s.agent.SID
}

// ClientMCPServers are the MCP servers the client added, read as an agent's start reads them: they change
// only while the session is detached and no agent starts.
func (c Control) ClientMCPServers() []agents.MCPServer { return c.s.clientMCP }

// NewReadyGate holds the agent's updates that follow its session/new answer until its Release (package agentlink).
func (c Control) NewReadyGate() *agentlink.ReadyGate {
	return c.s.ready.NewGate()
}

// AttachAgent makes conn, which opened agentSID, the session's agent, and a starting session idle. It
// attaches nothing (attached false) once Close or shutdown (the end of stopping) has begun. ready reports
// that the session_ready frame was logged, which notes the directory entry too.
func (c Control) AttachAgent(conn *agents.Conn, agentSID string, modes, configOptions json.RawMessage, stopping context.Context) (attached, ready bool) {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing || stopping.Err() != nil {
		return false, false
	}
	s.agent.Conn, s.agent.SID = conn, agentSID
	s.agent.Modes, s.agent.ConfigOptions = modes, configOptions
	ready = s.state.Status == store.StatusStarting
	if ready {
		s.logReadyLocked()
	}
	return true, ready
}

// AgentIsCurrent reports whether conn is the session's agent and its exit would be unexpected.
func (c Control) AgentIsCurrent(conn *agents.Conn) bool {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.agentIsCurrentLocked(conn)
}

// agentIsCurrentLocked is Control.AgentIsCurrent with mu held.
func (s *Session) agentIsCurrentLocked(conn *agents.Conn) bool {
	return s.agent.Conn == conn && !s.closing && !s.stopping && (s.state.Status == store.StatusIdle || s.state.Status == store.StatusRunning)
}

// MarkAgentFailed fails the session whose agent conn went away: pending permissions are denied (the answers
// to deliver) and the failed status is logged. ok is false when conn is no longer the session's agent.
func (c Control) MarkAgentFailed(conn *agents.Conn, reason string) (answers []pending.AnswerTo, ok bool) {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.agentIsCurrentLocked(conn) {
		return nil, false
	}
	answers = s.denyPendingLocked("", "agent_exit", "agent exited")
	s.logStatusLocked(store.StatusFailed, reason)
	return answers, true
}

// CloseTerminals closes the terminals the gateway runs for the agent; KillTerminals kills them. Either once
// the agent that used them is gone.
func (c Control) CloseTerminals() { c.s.svc.CloseTerminals() }

// KillTerminals kills the session's terminals' processes.
func (c Control) KillTerminals() { c.s.svc.KillTerminals() }
