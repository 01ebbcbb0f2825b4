package core

import (
	"os"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/store"
)

// What a re-attach checks of a stored session against today's policy, and what a refusal leaves.

// AddedMCPServers are the MCP servers the client added to the session, read under mu (AttachMCP sets them).
func (c Control) AddedMCPServers() []agents.MCPServer {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clientMCP
}

// ReopenWorkspace makes root, the stored cwd opened after its check, the directory fs/* serves. false once
// the session is closed (root is closed then).
func (c Control) ReopenWorkspace(root *os.Root) bool { return c.s.svc.ReopenWorkspace(root) }

// RefuseReattachLocked makes reason, a refused re-attach, the detached session's status reason, told to
// clients with a logged session_status frame when it is new. The caller holds mu.
func (c Control) RefuseReattachLocked(reason string, cause error) {
	s := c.s
	if s.state.Reason == reason {
		return
	}
	s.logger.Warn("stored session not re-attached: it fails today's policy", "err", cause)
	s.logStatusLocked(store.StatusDetached, reason)
}
