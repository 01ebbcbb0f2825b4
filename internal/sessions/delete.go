package sessions

import (
	"context"
	"encoding/json"

	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/sessions/internal/agentlink"
	"github.com/acp-gateway/gateway/internal/sessions/internal/core"
	acp "github.com/coder/acp-go-sdk"
)

// Delete closes the session this node runs and then deletes the agent's copy; the caller checked who may.
func (r *localRunner) Delete(ctx context.Context, who principal.Principal, reason string) (AgentDeletion, error) {
	s := r.s
	c := core.ControlOf(s)
	agentSID, caps := c.AgentOpened()
	if len(agentlink.NullToNil(caps)) == 0 {
		if known := r.reg.probes.Known(c.AgentSpec()); known != nil {
			caps = known.Capabilities
		}
	}
	c.Audit(who, "delete", "reason", reason)
	s.Close(reason)
	switch {
	case agentSID == "":
		return AgentDeletion{Status: AgentUnsupported, Detail: "the agent never opened the session"}, nil
	case len(agentlink.NullToNil(caps)) > 0 && !canDelete(caps):
		return AgentDeletion{Status: AgentUnsupported, Detail: "the agent does not advertise sessionCapabilities.delete"}, nil
	}
	return r.deleteAgentCopy(ctx, agentSID), nil
}

// deleteAgentCopy starts the session's agent again, in its cwd checked anew against the workspace roots,
// sends session/delete for agentSID when its initialize advertises it, and stops it.
func (r *localRunner) deleteAgentCopy(ctx context.Context, agentSID string) AgentDeletion {
	s := r.s
	c := core.ControlOf(s)
	failed := func(err error) AgentDeletion {
		c.SessionLogger().Warn("the agent's copy of a deleted session was not deleted", "agentSession", agentSID, "err", err)
		if sessionerr.IsStartFailure(err) { // its text names the gateway's paths
			return AgentDeletion{Status: AgentDeleteError, Detail: "the agent could not be started; the gateway log has the reason"}
		}
		return AgentDeletion{Status: AgentDeleteError, Detail: err.Error()}
	}
	if _, err := r.reg.admit.Confine(s.Cwd); err != nil {
		return failed(err)
	}
	conn, fail, err := r.launchAgent(ctx)
	if err != nil {
		return failed(err)
	}
	defer r.reg.cfg.Metrics.AgentExited(s.Agent, false)
	if !canDelete(c.AgentCapabilities()) {
		conn.Stop()
		return AgentDeletion{Status: AgentUnsupported, Detail: "the agent does not advertise sessionCapabilities.delete"}
	}
	cctx, cancel := context.WithTimeout(ctx, r.reg.cfg.CallTimeout)
	defer cancel()
	if _, err := conn.Call(cctx, acp.AgentMethodSessionDelete, map[string]any{"sessionId": agentSID}); err != nil {
		return failed(fail(acp.AgentMethodSessionDelete, agentlink.CallError(cctx, err, r.reg.cfg.CallTimeout)))
	}
	conn.Stop()
	c.SessionLogger().Info("the agent deleted its copy of the session", "agentSession", agentSID)
	return AgentDeletion{Status: AgentDeleted}
}

// canDelete reads sessionCapabilities.delete (an object when supported) from an agent's agentCapabilities.
func canDelete(caps json.RawMessage) bool {
	var c struct {
		Session struct {
			Delete json.RawMessage `json:"delete"`
		} `json:"sessionCapabilities"`
	}
	return json.Unmarshal(caps, &c) == nil && len(agentlink.NullToNil(c.Session.Delete)) > 0
}
