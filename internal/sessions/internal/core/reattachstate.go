package core

import (
	"context"
	"encoding/json"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/store"
)

// A prompt re-attaches a detached session (reattach.go): the session is starting while the agent loads its
// session back, then either holds the loaded agent or is detached again. A failed re-attach logs nothing.

// DetachedAtRestLocked reports whether the session is detached with no re-attach in progress, the only time
// its client MCP servers may change. The caller holds mu.
func (c Control) DetachedAtRestLocked() bool {
	return c.s.state.Status == store.StatusDetached && !c.s.reattaching
}

// BeginReattachLocked marks the detached session starting for the prompt that re-attaches it; cancel ends
// that re-attach (Close calls it). The caller holds mu.
func (c Control) BeginReattachLocked(cancel context.CancelFunc) {
	c.s.state.Status, c.s.reattaching, c.s.cancelAttach = store.StatusStarting, true, cancel
}

// EndReattachLocked ends the re-attach state, and reports whether Close began meanwhile. The caller holds mu.
func (c Control) EndReattachLocked() (closing bool) {
	s := c.s
	s.reattaching, s.cancelAttach = false, nil
	return s.closing
}

// RedetachLocked puts a session whose re-attach failed back to detached; its log is untouched. The caller
// holds mu.
func (c Control) RedetachLocked() { c.s.state.Status = store.StatusDetached }

// AttachLoadedLocked makes conn, which took the agent session back, the session's agent, with the modes and
// config options its load answered. The session stays starting until its turn starts. The caller holds mu.
func (c Control) AttachLoadedLocked(conn *agents.Conn, modes, configOptions json.RawMessage) {
	s := c.s
	s.agent.Conn = conn
	s.agent.Modes, s.agent.ConfigOptions = modes, configOptions
}
