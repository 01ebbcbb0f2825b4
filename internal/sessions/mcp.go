package sessions

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/sessions/internal/core"
)

// MCP servers reach an agent on session/new, and on the session/load or session/resume that re-attaches a
// detached session: the ones the operator configured for it (agents.Spec.MCPServers) and the ones the client
// added, on session/new or while the session was detached (AttachMCP). A client may add http and sse servers
// only when the agent advertises them (`mcpCapabilities.http`/`sse`), and stdio servers only when the operator
// allowed it (Config.AllowClientMCPStdio): a client-chosen command runs on the gateway's host. Env and header
// values are never echoed: errors name servers and fields only.

// checkClientMCP checks a client's servers against the gateway's rules before the agent is started.
func (r *Registry) checkClientMCP(spec agents.Spec, servers []agents.MCPServer) error {
	for _, m := range servers {
		if m.Type == agents.MCPStdio && !r.cfg.AllowClientMCPStdio {
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
			return fmt.Errorf("%w: server %q is %s, and the agent does not advertise mcpCapabilities.%s", sessionerr.ErrMCPUnsupported, m.Name, m.Type, m.Type)
		}
	}
	return nil
}

// hasMCP reports whether every server in servers is one the session has, as it is. Called with mu held.
func (r *localRunner) hasMCP(servers []agents.MCPServer) bool {
	have := core.ControlOf(r.s).McpServers()
	for _, m := range servers {
		if h, ok := findMCP(have, m.Name); !ok || !h.Equal(m) {
			return false
		}
	}
	return true
}

// mcpNames lists the servers' names (never their env or headers), for the audit line.
func mcpNames(list []agents.MCPServer) []string {
	out := make([]string, 0, len(list))
	for _, m := range list {
		out = append(out, m.Name)
	}
	return out
}

// checkSameMCP allows only servers the running session has, as they are.
func (r *localRunner) checkSameMCP(servers []agents.MCPServer) error {
	s := r.s
	have := core.ControlOf(s).McpServers()
	for _, m := range servers {
		if h, ok := findMCP(have, m.Name); ok {
			if h.Equal(m) {
				continue
			}
			return fmt.Errorf("%w: server %q differs from the session's; %s", sessionerr.ErrMCPNameConflict, m.Name, sessionerr.ErrMCPFixed)
		}
		if m.Type == agents.MCPStdio && !r.reg.cfg.AllowClientMCPStdio {
			return fmt.Errorf("%w: server %q (the operator enables them with --allow-client-mcp-stdio)", sessionerr.ErrMCPStdioForbidden, m.Name)
		}
		return fmt.Errorf("%w: the session has no server %q", sessionerr.ErrMCPFixed, m.Name)
	}
	return nil
}

func findMCP(list []agents.MCPServer, name string) (agents.MCPServer, bool) {
	for _, m := range list {
		if m.Name == name {
			return m, true
		}
	}
	return agents.MCPServer{}, false
}

// scrubMCPSecrets removes the session's MCP env and header values from an agent's failure to start: an agent
// that refuses its MCP configuration may quote it in its JSON-RPC error or on stderr, and both reach the
// client's problem and the gateway log. An error that quoted one loses its JSON-RPC code (it becomes text).
func (r *localRunner) scrubMCPSecrets(ae *sessionerr.AgentError) *sessionerr.AgentError {
	secrets := core.ControlOf(r.s).AgentSecrets()
	ae.Stderr, _ = agents.Scrub(ae.Stderr, secrets)
	if msg, found := agents.Scrub(ae.Err.Error(), secrets); found {
		ae.Err = errors.New(msg)
	}
	return ae
}
