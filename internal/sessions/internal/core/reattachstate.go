package core

import (
	"context"
	"encoding/json"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/store"
)

// A prompt re-attaches a detached session (reattach.go): the session is starting while the agent loads its
// session back, then either holds the loaded agent or is detached again. A failed re-attach logs nothing.

// detachedAtRestLocked reports whether the session is detached with no re-attach in progress, the only time
// its client MCP servers may change. The caller holds mu.
func (s *Session) detachedAtRestLocked() bool {
	return s.status == store.StatusDetached && !s.reattaching
}

// beginReattachLocked marks the detached session starting for the prompt that re-attaches it; cancel ends
// that re-attach (Close calls it). The caller holds mu.
func (s *Session) beginReattachLocked(cancel context.CancelFunc) {
	s.status, s.reattaching, s.cancelAttach = store.StatusStarting, true, cancel
}

// endReattachLocked ends the re-attach state, and reports whether Close began meanwhile. The caller holds mu.
func (s *Session) endReattachLocked() (closing bool) {
	s.reattaching, s.cancelAttach = false, nil
	return s.closing
}

// redetachLocked puts a session whose re-attach failed back to detached; its log is untouched. The caller
// holds mu.
func (s *Session) redetachLocked() { s.status = store.StatusDetached }

// attachLoadedLocked makes conn, which took the agent session back, the session's agent, with the modes and
// config options its load answered. The session stays starting until its turn starts. The caller holds mu.
func (s *Session) attachLoadedLocked(conn *agents.Conn, modes, configOptions json.RawMessage) {
	s.conn = conn
	s.modes, s.configOptions = modes, configOptions
}
