package sessions

import (
	"context"
	"encoding/json"

	"github.com/acp-gateway/gateway/internal/agentprobe"
	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/sessions/internal/login"
)

// Agent login from a client (package login): the Registry's methods the faces call.

type (
	// LoginStatus is what GET /v1/agents/{agent}/login shows a principal.
	LoginStatus = login.Status
	// LogoutResult is what DELETE /v1/agents/{agent}/login answers.
	LogoutResult = login.LogoutResult
)

// LoginStatus returns the agent's auth methods and which of them p completed.
func (r *Registry) LoginStatus(ctx context.Context, p principal.Principal, agent string) (LoginStatus, error) {
	return r.login.Status(ctx, p, agent)
}

// SetLoginEnv keeps vars, the variables of the agent's env_var method methodID, for p's sessions of the
// agent (login.Logins.SetEnv).
func (r *Registry) SetLoginEnv(ctx context.Context, p principal.Principal, agent, methodID string, vars map[string]string) (LoginStatus, error) {
	return r.login.SetEnv(ctx, p, agent, methodID, vars)
}

// LoginAgentMethod runs the agent's agent method methodID for p and remembers it on success
// (login.Logins.AgentMethod).
func (r *Registry) LoginAgentMethod(ctx context.Context, p principal.Principal, agent, methodID string) (json.RawMessage, error) {
	return r.login.AgentMethod(ctx, p, agent, methodID)
}

// Logout forgets p's login to the agent and sends the agent ACP logout where it advertises it.
func (r *Registry) Logout(ctx context.Context, p principal.Principal, agent string) (LogoutResult, error) {
	return r.login.Logout(ctx, p, agent)
}

// loginHost is the registry as its logins' Host (package login).
type loginHost struct{ r *Registry }

var _ login.Host = loginHost{}

func (h loginHost) Agent(name string) (agents.Spec, bool) {
	spec, ok := h.r.agents[name]
	return spec, ok
}

func (h loginHost) AgentInit(ctx context.Context, name string) (agentprobe.AgentInit, bool) {
	return h.r.AgentInit(ctx, name)
}

func (h loginHost) Stopping() context.Context { return h.r.stopping }
