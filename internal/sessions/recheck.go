package sessions

import (
	"errors"
	"fmt"

	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/sessions/internal/core"
)

// Before a detached session's agent runs again (a re-attach, in this process or after a restart), what the
// session stored is checked against the gateway's policy of today (docs/security.md): its cwd must still be the
// directory it was, with no symlink swapped in on its path, inside today's workspace roots, and its client MCP
// servers must pass today's rules (a stdio one needs --allow-client-mcp-stdio). A session that fails stays
// detached with the reason in its status; nothing is started.

// refusal is a re-attach the policy check refused; its text is the session's status reason.
type refusal struct{ err error }

func (e *refusal) Error() string { return "re-attach refused: " + e.err.Error() }
func (e *refusal) Unwrap() error { return e.err }

// recheck checks s's stored cwd and client MCP servers before its agent starts again, and makes the cwd,
// opened after the check passed, the root fs/* uses.
func (r *Registry) recheck(s *Session) error {
	c := core.ControlOf(s)
	if err := r.admit.CheckClientMCP(c.AgentSpec(), c.AddedMCPServers()); err != nil {
		return &refusal{fmt.Errorf("%w; a client names other servers with session/load", err)}
	}
	if err := r.admit.RecheckDirs(s.AdditionalDirs); err != nil {
		return &refusal{err}
	}
	root, err := r.admit.Reconfine(s.Cwd)
	if err != nil {
		return &refusal{err}
	}
	if !c.ReopenWorkspace(root) {
		return sessionerr.ErrClosed
	}
	return nil
}

// noteRefusalLocked makes a refused re-attach the detached session's status reason, and tells clients with a
// logged session_status frame when the reason is new. Other failures leave the reason alone. The caller holds
// s.mu.
func (r *Registry) noteRefusalLocked(s *Session, err error) {
	var rf *refusal
	if !errors.As(err, &rf) {
		return
	}
	core.ControlOf(s).RefuseReattachLocked(rf.Error(), rf.err)
}
