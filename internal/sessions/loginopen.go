package sessions

import (
	"context"
	"encoding/json"

	"github.com/acp-gateway/gateway/internal/agenterr"
	"github.com/acp-gateway/gateway/internal/agentlogin"
	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/sessions/internal/core"
	acp "github.com/coder/acp-go-sdk"
)

// openAgentSession sends session/new (load, resume: dropReplay) to a freshly started agent. When the agent
// answers auth_required and the session's principal logged it in with an agent method before (login.go),
// that authenticate is sent again on this process and the request retried once: agents whose login lives
// in their process, not on disk, then open sessions as they did right after the login. watch, when not nil,
// marks the context of the method's own calls (the start's ready gate), never authenticate's.
func (r *localRunner) openAgentSession(ctx context.Context, conn *agents.Conn, method string, params any, dropReplay bool, watch func(context.Context) context.Context) (json.RawMessage, error) {
	s := r.s
	c := core.ControlOf(s)
	call := conn.Call
	if dropReplay {
		call = conn.CallDroppingUpdates
	}
	mctx := ctx
	if watch != nil {
		mctx = watch(ctx)
	}
	res, err := call(mctx, method, params)
	if err == nil || !sessionerr.IsAuthRequired(err) {
		return res, err
	}
	spec := c.AgentSpec()
	m := r.reg.logins.AgentMethod(spec, s.Owner)
	if m == "" || m == spec.AuthMethod {
		return res, err
	}
	if _, aerr := conn.Call(ctx, acp.AgentMethodAuthenticate, map[string]any{"methodId": m}); aerr != nil {
		c.SessionLogger().Info("remembered agent login refused", "method", m, "err", agentlogin.ScrubErr(agenterr.Clean(aerr), c.AgentSecrets()))
		return res, err
	}
	return call(mctx, method, params)
}
