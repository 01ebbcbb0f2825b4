package core

import (
	"context"

	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/sessions/internal/access"
)

// Deleting a session (ACP session/delete): the gateway closes it, which removes it everywhere (log, store,
// directory), and then asks the agent to delete its own copy when the agent advertises
// sessionCapabilities.delete. The agent that served the session is stopped by the close, so a short-lived
// agent process of the same configuration, in the same cwd, is started for the request, as a re-attach
// starts one to load the session.

// What became of the agent's own copy of a deleted session (AgentDeletion.Status).
const (
	AgentDeleted     = "deleted"     // the agent answered session/delete
	AgentUnsupported = "unsupported" // the agent does not advertise session/delete (or never opened the session)
	AgentDeleteError = "failed"      // the agent could not be started or answered an error; Detail says which
)

// AgentDeletion says what became of the agent's own copy of a deleted session.
type AgentDeletion struct {
	Status string `json:"status"`
	Detail string `json:"detail,omitempty"`
}

// DeleteAs deletes s for who (the owner or an admin, as for a close), audited: the session is closed and
// removed as CloseAs does, then the agent's copy is deleted where the agent supports it. The session is gone
// whatever the agent answers; the result says what became of the agent's copy.
func (s *Session) DeleteAs(ctx context.Context, who principal.Principal, reason string) (AgentDeletion, error) {
	if err := s.allow(who, access.Own); err != nil {
		return AgentDeletion{}, err
	}
	return s.run.Delete(ctx, who, reason)
}
