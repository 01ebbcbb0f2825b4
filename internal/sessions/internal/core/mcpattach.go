package core

import (
	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/principal"
)

// AttachMCPAs takes the mcpServers an ACP client of who sends with session/load or session/resume (nil: the
// client sent none, nothing changes).
//
// Changing them needs the right to change the session (the owner or an admin, as for its mode): a viewer or a
// collaborator may repeat servers the session has, or name none, and is refused (ErrForbidden) anything that
// would add, change or drop one; what they send never replaces the session's servers.
//
// While the session is detached (its agent is not running), they are checked as on session/new (stdio only
// when the operator allows it, http and sse only when the agent advertised them at its last start, no
// configured name) and become the client's servers, replacing the ones it had: the re-attach passes the
// configured servers and these to the agent's session/load or session/resume. A server that repeats a
// configured one (same name, same configuration) is the configured one.
//
// While the agent runs (or is starting) it already has its servers, so a client may repeat servers the session
// has but not add or change any.
func (s *Session) AttachMCPAs(who principal.Principal, servers []agents.MCPServer) error {
	if servers == nil {
		return nil
	}
	return s.run.AttachMCP(who, servers)
}
