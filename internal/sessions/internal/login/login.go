package login

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/acp-gateway/gateway/internal/agenterr"
	"github.com/acp-gateway/gateway/internal/agentlogin"
	"github.com/acp-gateway/gateway/internal/agentprobe"
	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/confine"
	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/sessions/internal/agentlink"
	acp "github.com/coder/acp-go-sdk"
)

// Agent login from a client: an agent that answers auth_required names its authMethods; a principal
// completes one (env_var: supplies the variables; agent: the agent's own authenticate) and opens the
// session again. What a principal supplies serves only their own sessions of the agent, unless the agents
// file shares the agent's login (agents.Spec.LoginShared); then only admins change it.

// Host is what a login asks of the registry. The registry implements it with a small adapter, so none of it
// becomes a public method of the Registry the faces use.
type Host interface {
	// Agent is the configured agent of that name; ok is false for an unknown one.
	Agent(name string) (spec agents.Spec, ok bool)
	// AgentInit is the agent's initialize answer, probed first when none is known.
	AgentInit(ctx context.Context, name string) (agentprobe.AgentInit, bool)
	// Stopping ends when the registry's shutdown begins: a login process in progress is stopped.
	Stopping() context.Context
}

// Config is what a login reads of the registry's settings; the registry builds it once, with its defaults.
type Config struct {
	Vault             *agentlogin.Vault // what principals supplied
	Logger            *slog.Logger
	Workdir           string // where a login's agent process runs
	AgentEnv          []string
	Confiner          *confine.Confiner
	Version           string
	StartTimeout      time.Duration
	StopGrace         time.Duration
	AgentWriteTimeout time.Duration
}

// Logins are the registry's agent logins from clients.
type Logins struct {
	host Host    // Static after construction.
	cfg  *Config // Static after construction.
}

// New is the logins of the registry h, with its settings cfg.
func New(h Host, cfg *Config) *Logins { return &Logins{host: h, cfg: cfg} }

// Status is what GET /v1/agents/{agent}/login shows a principal.
type Status struct {
	Agent string `json:"agent"`
	// AuthMethods are the agent's, as it described them in initialize.
	AuthMethods json.RawMessage `json:"authMethods"`
	// Satisfied are the ids of the methods this principal (or, shared, anyone) completed: an env_var
	// method whose variables the gateway holds, the agent method whose authenticate last succeeded.
	Satisfied []string `json:"satisfied"`
	// Vars are the names of the variables held, never their values.
	Vars []string `json:"vars"`
	// Shared is the agents file's "login": {"shared": true}: one login serves every principal.
	Shared bool `json:"shared"`
	// Logout is whether the agent advertises ACP logout (agentCapabilities.auth.logout).
	Logout bool `json:"logout"`
}

// LogoutResult is what DELETE /v1/agents/{agent}/login answers.
type LogoutResult struct {
	Agent string `json:"agent"`
	// Forgotten: the gateway held a login of this principal (variables or an agent method) and dropped it.
	Forgotten bool `json:"forgotten"`
	// AgentLogout: the agent advertises logout and answered it.
	AgentLogout bool   `json:"agentLogout"`
	Detail      string `json:"detail"`
}

// Status returns the agent's auth methods and which of them p completed.
func (l *Logins) Status(ctx context.Context, p principal.Principal, agent string) (Status, error) {
	spec, ai, err := l.loginAgent(ctx, agent)
	if err != nil {
		return Status{}, err
	}
	return l.status(spec, ai, p), nil
}

func (l *Logins) status(spec agents.Spec, ai agentprobe.AgentInit, p principal.Principal) Status {
	envMethod, names, agentMethod := l.cfg.Vault.State(spec, p)
	st := Status{Agent: spec.Name, AuthMethods: agentlogin.MethodsArray(ai.AuthMethods), Satisfied: []string{}, Vars: names,
		Shared: spec.LoginShared, Logout: agentlogin.AdvertisesLogout(ai.Capabilities)}
	if st.Vars == nil {
		st.Vars = []string{}
	}
	for _, m := range agentlogin.ParseAuthMethods(ai.AuthMethods) {
		if m.ID != "" && (m.Type == "env_var" && m.ID == envMethod || m.Type == "" && m.ID == agentMethod) {
			st.Satisfied = append(st.Satisfied, m.ID)
		}
	}
	return st
}

// SetEnv keeps vars, the variables of the agent's env_var method methodID, for p's sessions of the
// agent: each agent process started for them gets them as environment from now on. The variables must be
// the method's (no unknown names, every required one), else ErrInvalidLoginVars.
func (l *Logins) SetEnv(ctx context.Context, p principal.Principal, agent, methodID string, vars map[string]string) (Status, error) {
	spec, ai, err := l.loginAgent(ctx, agent)
	if err != nil {
		return Status{}, err
	}
	if err := mayChangeLogin(spec, p); err != nil {
		return Status{}, err
	}
	m, ok := agentlogin.FindAuthMethod(ai.AuthMethods, methodID, "env_var")
	if !ok {
		return Status{}, fmt.Errorf("%w: agent %q offers no env_var method %q", sessionerr.ErrUnknownLoginMethod, agent, agenterr.Clip(methodID, 128))
	}
	kept, err := agentlogin.CheckVars(m, vars)
	if err != nil {
		return Status{}, fmt.Errorf("%w: %w", sessionerr.ErrInvalidLoginVars, err)
	}
	l.cfg.Vault.SetEnv(spec, p, methodID, kept)
	principal.Audit(l.cfg.Logger, p, "agent_login_env", "agent", agent, "method", methodID, "vars", slices.Sorted(maps.Keys(kept)), "shared", spec.LoginShared)
	return l.status(spec, ai, p), nil
}

// AgentMethod runs the agent's agent method methodID for p: a fresh agent process (with p's login
// variables) gets initialize and authenticate, and its answer is returned. On success the method is
// remembered: a later session of p whose agent answers auth_required gets the same authenticate first.
func (l *Logins) AgentMethod(ctx context.Context, p principal.Principal, agent, methodID string) (json.RawMessage, error) {
	spec, ai, err := l.loginAgent(ctx, agent)
	if err != nil {
		return nil, err
	}
	if err := mayChangeLogin(spec, p); err != nil {
		return nil, err
	}
	if _, ok := agentlogin.FindAuthMethod(ai.AuthMethods, methodID, ""); !ok {
		return nil, fmt.Errorf("%w: agent %q offers no agent method %q", sessionerr.ErrUnknownLoginMethod, agent, agenterr.Clip(methodID, 128))
	}
	res, err := l.callOnLoginProcess(ctx, spec, p, "authenticate "+methodID, acp.AgentMethodAuthenticate, map[string]any{"methodId": methodID})
	if err != nil {
		return nil, err
	}
	l.cfg.Vault.SetAgentMethod(spec, p, methodID)
	principal.Audit(l.cfg.Logger, p, "agent_login_agent", "agent", agent, "method", methodID, "shared", spec.LoginShared)
	return res, nil
}

// Logout forgets p's login to the agent and, where the agent advertises logout, sends it ACP logout on a
// fresh process started with p's login variables (before they are forgotten).
func (l *Logins) Logout(ctx context.Context, p principal.Principal, agent string) (LogoutResult, error) {
	spec, ai, err := l.loginAgent(ctx, agent)
	if err != nil {
		return LogoutResult{}, err
	}
	if err := mayChangeLogin(spec, p); err != nil {
		return LogoutResult{}, err
	}
	res := LogoutResult{Agent: agent}
	var agentErr error
	if agentlogin.AdvertisesLogout(ai.Capabilities) {
		_, agentErr = l.callOnLoginProcess(ctx, spec, p, "logout", acp.AgentMethodLogout, map[string]any{})
		res.AgentLogout = agentErr == nil
	}
	res.Forgotten = l.cfg.Vault.Forget(spec, p)
	principal.Audit(l.cfg.Logger, p, "agent_logout", "agent", agent, "forgotten", res.Forgotten, "agentLogout", res.AgentLogout)
	switch {
	case agentErr != nil:
		return LogoutResult{}, agentErr
	case res.AgentLogout:
		res.Detail = "the agent logged out and the gateway forgot the login it held"
	default:
		res.Detail = "the agent does not support logout: the gateway forgot the login it held (variables, agent method); credentials the agent keeps itself stay"
	}
	return res, nil
}

// mayChangeLogin refuses a non-admin changing a shared login: it serves every principal's sessions.
func mayChangeLogin(spec agents.Spec, p principal.Principal) error {
	if spec.LoginShared && !p.IsAdmin() {
		return loginForbidden{spec.Name}
	}
	return nil
}

// loginForbidden is ErrForbidden for a shared login, with a message that says so.
type loginForbidden struct{ agent string }

func (e loginForbidden) Error() string {
	return "the login of agent " + e.agent + " is shared by every user (agents file); only an admin changes it"
}
func (e loginForbidden) Unwrap() error { return sessionerr.ErrForbidden }

// loginAgent returns the agent's spec and initialize answer (probed when not known).
func (l *Logins) loginAgent(ctx context.Context, agent string) (agents.Spec, agentprobe.AgentInit, error) {
	spec, ok := l.host.Agent(agent)
	if !ok {
		return agents.Spec{}, agentprobe.AgentInit{}, fmt.Errorf("%w: %q", sessionerr.ErrUnknownAgent, agenterr.Clip(agent, 64))
	}
	if err := agents.CheckCommand(spec); err != nil {
		return agents.Spec{}, agentprobe.AgentInit{}, fmt.Errorf("%w: agent %q: %v", sessionerr.ErrAgentUnavailable, spec.Name, err)
	}
	ai, ok := l.host.AgentInit(ctx, agent)
	if !ok {
		return agents.Spec{}, agentprobe.AgentInit{}, fmt.Errorf("%w: agent %q did not answer initialize (the gateway log has why)", sessionerr.ErrAgentUnavailable, agent)
	}
	return spec, ai, nil
}

// callOnLoginProcess starts the agent for p (with p's login variables and HOME, in the gateway's workdir), sends
// initialize and then method, and stops it. A failure is an *AgentError named op, its secrets scrubbed.
func (l *Logins) callOnLoginProcess(ctx context.Context, spec agents.Spec, p principal.Principal, op, method string, params any) (json.RawMessage, error) {
	cfg := l.cfg
	ctx, cancel := context.WithTimeout(ctx, cfg.StartTimeout)
	defer cancel()
	defer context.AfterFunc(l.host.Stopping(), cancel)()
	env := l.cfg.Vault.Env(spec, p)
	secrets := append(agents.MCPSecrets(spec.MCPServers), agentlogin.SecretsOf(env)...)
	spec = spec.ForPrincipal(p.ID) // the HOME p's sessions use, where an agent keeps what authenticate gave it
	if err := spec.MakeHome(); err != nil {
		return nil, &sessionerr.AgentError{Op: "start agent", Err: fmt.Errorf("per-principal home: %w", err)}
	}
	conn, err := agents.Start(spec, agents.Options{
		Cwd: cfg.Workdir, Env: cfg.AgentEnv, LoginEnv: env, Handler: agentprobe.Handler{}, StopGrace: cfg.StopGrace,
		Logger: cfg.Logger.With("agent", spec.Name, "login", true), WriteTimeout: cfg.AgentWriteTimeout,
		Confiner: cfg.Confiner, Secrets: secrets,
	})
	if err != nil {
		return nil, scrubAgentError(&sessionerr.AgentError{Op: "start agent", Err: err}, secrets)
	}
	defer conn.Stop()
	if _, err := agentprobe.Initialize(ctx, conn, cfg.Version); err != nil {
		return nil, scrubAgentError(&sessionerr.AgentError{Op: "initialize", Err: agentlink.CallError(ctx, err, cfg.StartTimeout), Stderr: conn.Stderr()}, secrets)
	}
	res, err := conn.Call(ctx, method, params)
	if err != nil {
		return nil, scrubAgentError(&sessionerr.AgentError{Op: op, Err: agentlink.CallError(ctx, err, cfg.StartTimeout), Stderr: conn.Stderr()}, secrets)
	}
	if res = agentlink.NullToNil(res); res == nil {
		res = json.RawMessage("{}")
	}
	return res, nil
}

// scrubAgentError removes secrets from an agent's failure (its stderr is already scrubbed by the
// connection): an error that quoted one becomes text.
func scrubAgentError(ae *sessionerr.AgentError, secrets []string) *sessionerr.AgentError {
	ae.Stderr, _ = agents.Scrub(ae.Stderr, secrets)
	if msg, found := agents.Scrub(ae.Err.Error(), secrets); found {
		ae.Err = fmt.Errorf("%s", msg)
	}
	return ae
}
