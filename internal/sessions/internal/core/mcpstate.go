package core

import (
	"slices"

	"github.com/acp-gateway/gateway/internal/agents"
)

// SetClientMCPLocked replaces the MCP servers the client added, and reports whether they changed. Written
// under mu while detached: the agent's start, which reads them, begins after a prompt takes the session out
// of detached under mu. The caller holds mu.
func (c Control) SetClientMCPLocked(client []agents.MCPServer) (changed bool) {
	s := c.s
	changed = !slices.EqualFunc(s.clientMCP, client, agents.MCPServer.Equal)
	s.clientMCP = client
	return changed
}
