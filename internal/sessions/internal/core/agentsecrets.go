package core

import "github.com/acp-gateway/gateway/internal/agents"

// mcpServers is the `mcpServers` the gateway sends the agent on session/new, session/load and session/resume:
// the configured servers, then the client's. Never nil (ACP requires the array).
func (s *Session) mcpServers() []agents.MCPServer {
	out := make([]agents.MCPServer, 0, len(s.spec.MCPServers)+len(s.clientMCP))
	out = append(out, s.spec.MCPServers...)
	return append(out, s.clientMCP...)
}

// AgentSecrets are the values scrubbed from what the session's agent says back: its MCP servers' env and
// headers, and the login variables it was started with.
func (c Control) AgentSecrets() []string {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.agentSecretsLocked()
}

func (s *Session) agentSecretsLocked() []string {
	return append(agents.MCPSecrets(s.mcpServers()), s.agent.Secrets...)
}
