package core

import (
	"slices"

	"github.com/acp-gateway/gateway/internal/agents"
)

// setClientMCPLocked replaces the MCP servers the client added, and reports whether they changed. Written
// under mu while detached: the agent's start, which reads them, begins after a prompt takes the session out
// of detached under mu. The caller holds mu.
func (s *Session) setClientMCPLocked(client []agents.MCPServer) (changed bool) {
	changed = !slices.EqualFunc(s.clientMCP, client, agents.MCPServer.Equal)
	s.clientMCP = client
	return changed
}
