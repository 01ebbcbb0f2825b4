package core

import (
	"github.com/acp-gateway/gateway/internal/sessions/internal/statusfold"
	"github.com/acp-gateway/gateway/internal/store"
)

// A session's status is what its log states (packages fold and statusfold): the owner folds each gateway
// frame as it logs it (appendGatewayLocked), a restart and another node's copy as they read it back
// (putStoredLocked).

// logStatusLocked logs `_gateway/session_status {status, reason}`, which sets the status. The caller holds mu.
func (s *Session) logStatusLocked(status store.Status, reason string) {
	s.appendGatewayLocked(statusfold.SessionStatus, "", map[string]any{"status": status, "reason": reason})
}

// logReadyLocked logs `_gateway/session_ready`: the agent answered session/new, and the starting session is
// idle. The caller holds mu.
func (s *Session) logReadyLocked() {
	s.appendGatewayLocked(statusfold.SessionReady, "", map[string]any{"status": store.StatusIdle})
}

// reattachingNow reports whether a prompt is re-attaching the session.
func (s *Session) reattachingNow() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reattaching
}

// stoodDownNow reports whether the session was stood down.
func (s *Session) stoodDownNow() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stoodDown
}
