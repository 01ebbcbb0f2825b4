package admit

import (
	"encoding/json"
	"fmt"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/sessionerr"
)

// MCP servers reach an agent on session/new, and on the session/load or session/resume that re-attaches a
// detached session: the ones the operator configured for it and the ones a client added. A client may add
// http and sse servers only when the agent advertises them, and stdio servers only when the operator allowed
// it (Policy.AllowClientMCPStdio): a client-chosen command runs on the gateway's host. Env and header values
// are never echoed: errors name servers and fields only.

// CheckClientMCP checks a client's servers against the gateway's rules before the agent is started.
func (p *Policy) CheckClientMCP(spec agents.Spec, servers []agents.MCPServer) error {
	for _, m := range servers {
		if m.Type == agents.MCPStdio && !p.AllowClientMCPStdio {
			return fmt.Errorf("%w: server %q (the operator enables them with --allow-client-mcp-stdio)", sessionerr.ErrMCPStdioForbidden, m.Name)
		}
		for _, c := range spec.MCPServers {
			if c.Name == m.Name {
				return fmt.Errorf("%w: %q is configured for agent %q; choose another name", sessionerr.ErrMCPNameConflict, m.Name, spec.Name)
			}
		}
	}
	return nil
}

// CheckMCPTransports checks the client's http and sse servers against the agentCapabilities the agent
// answered to initialize.
func CheckMCPTransports(caps json.RawMessage, servers []agents.MCPServer) error {
	var c struct {
		MCP struct {
			HTTP bool `json:"http"`
			SSE  bool `json:"sse"`
		} `json:"mcpCapabilities"`
	}
	_ = json.Unmarshal(caps, &c) // absent or malformed: the agent advertised neither
	for _, m := range servers {
		if m.Type == agents.MCPHTTP && !c.MCP.HTTP || m.Type == agents.MCPSSE && !c.MCP.SSE {
			return fmt.Errorf("%w: server %q is %s, and the agent does not advertise mcpCapabilities.%s", sessionerr.ErrMCPUnsupported, m.Name, m.Type, m.Type)
		}
	}
	return nil
}

// FindMCP is the server of that name in list.
func FindMCP(list []agents.MCPServer, name string) (agents.MCPServer, bool) {
	for _, m := range list {
		if m.Name == name {
			return m, true
		}
	}
	return agents.MCPServer{}, false
}
