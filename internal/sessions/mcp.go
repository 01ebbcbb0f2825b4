package sessions

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/acp-gateway/gateway/internal/agents"
)

// MCP servers reach an agent on session/new: the ones the operator configured for it (agents.Spec.MCPServers)
// and the ones the client that made the session added. A client may add http and sse servers only when the
// agent advertises them (`mcpCapabilities.http`/`sse`), and stdio servers only when the operator allowed it
// (Config.AllowClientMCPStdio): a client-chosen command runs on the gateway's host. Env and header values are
// never echoed: errors name servers and fields only.

// Errors of a client's MCP servers; faces answer 422 / JSON-RPC -32602.
var (
	ErrMCPStdioForbidden = errors.New("stdio MCP servers from clients are not allowed by this gateway")
	ErrMCPNameConflict   = errors.New("MCP server name already in use")
	ErrMCPUnsupported    = errors.New("MCP transport not supported by the agent")
	ErrMCPFixed          = errors.New("MCP servers are fixed when a session starts")
)

// checkClientMCP checks a client's servers against the gateway's rules before the agent is started.
func (r *Registry) checkClientMCP(spec agents.Spec, servers []agents.MCPServer) error {
	for _, m := range servers {
		if m.Type == agents.MCPStdio && !r.cfg.AllowClientMCPStdio {
			return fmt.Errorf("%w: server %q (the operator enables them with --allow-client-mcp-stdio)", ErrMCPStdioForbidden, m.Name)
		}
		for _, c := range spec.MCPServers {
			if c.Name == m.Name {
				return fmt.Errorf("%w: %q is configured for agent %q; choose another name", ErrMCPNameConflict, m.Name, spec.Name)
			}
		}
	}
	return nil
}

// checkMCPTransports checks the client's http and sse servers against the agentCapabilities the agent
// answered to initialize.
func checkMCPTransports(caps json.RawMessage, servers []agents.MCPServer) error {
	var c struct {
		MCP struct {
			HTTP bool `json:"http"`
			SSE  bool `json:"sse"`
		} `json:"mcpCapabilities"`
	}
	_ = json.Unmarshal(caps, &c) // absent or malformed: the agent advertised neither
	for _, m := range servers {
		if m.Type == agents.MCPHTTP && !c.MCP.HTTP || m.Type == agents.MCPSSE && !c.MCP.SSE {
			return fmt.Errorf("%w: server %q is %s, and the agent does not advertise mcpCapabilities.%s", ErrMCPUnsupported, m.Name, m.Type, m.Type)
		}
	}
	return nil
}

// mcpServers is the `mcpServers` the gateway sends the agent on session/new, session/load and session/resume:
// the configured servers, then the client's. Never nil (ACP requires the array).
func (s *Session) mcpServers() []agents.MCPServer {
	out := make([]agents.MCPServer, 0, len(s.spec.MCPServers)+len(s.clientMCP))
	out = append(out, s.spec.MCPServers...)
	return append(out, s.clientMCP...)
}

// CheckAttachMCP checks the mcpServers an ACP client sends with session/load or session/resume. The session's
// agent is already running with its servers, so a client may repeat servers the session has (same name, same
// configuration) but not add or change any.
func (s *Session) CheckAttachMCP(servers []agents.MCPServer) error {
	have := s.mcpServers()
next:
	for _, m := range servers {
		for _, h := range have {
			if h.Name == m.Name {
				if h.Equal(m) {
					continue next
				}
				return fmt.Errorf("%w: server %q differs from the session's; start a new session to change it", ErrMCPNameConflict, m.Name)
			}
		}
		if m.Type == agents.MCPStdio && !s.reg.cfg.AllowClientMCPStdio {
			return fmt.Errorf("%w: server %q (the operator enables them with --allow-client-mcp-stdio)", ErrMCPStdioForbidden, m.Name)
		}
		return fmt.Errorf("%w: the session has no server %q; start a new session (session/new) with it", ErrMCPFixed, m.Name)
	}
	return nil
}

// scrubMCPSecrets removes the session's MCP env and header values from an agent's failure to start: an agent
// that refuses its MCP configuration may quote it in its JSON-RPC error or on stderr, and both reach the
// client's problem and the gateway log. An error that quoted one loses its JSON-RPC code (it becomes text).
func (s *Session) scrubMCPSecrets(ae *AgentError) *AgentError {
	secrets := agents.MCPSecrets(s.mcpServers())
	ae.Stderr, _ = agents.Scrub(ae.Stderr, secrets)
	if msg, found := agents.Scrub(ae.Err.Error(), secrets); found {
		ae.Err = errors.New(msg)
	}
	return ae
}
