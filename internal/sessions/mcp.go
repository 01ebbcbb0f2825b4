package sessions

import (
	"errors"
	"fmt"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/sessions/internal/admit"
	"github.com/acp-gateway/gateway/internal/sessions/internal/core"
)

// What the local runner checks of a change to its session's MCP servers (AttachMCP), and its secrets kept out
// of an agent's failure; the rules for a client's servers are package admit's.

// hasMCP reports whether every server in servers is one the session has, as it is. Called with mu held.
func (r *localRunner) hasMCP(servers []agents.MCPServer) bool {
	have := core.ControlOf(r.s).McpServers()
	for _, m := range servers {
		if h, ok := admit.FindMCP(have, m.Name); !ok || !h.Equal(m) {
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
		if h, ok := admit.FindMCP(have, m.Name); ok {
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
