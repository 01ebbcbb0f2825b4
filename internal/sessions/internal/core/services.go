package core

import (
	"context"
	"encoding/json"
	"os"

	"github.com/acp-gateway/gateway/internal/agentsvc"
	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/sessions/internal/access"
	"github.com/acp-gateway/gateway/internal/sessions/internal/services"
	"github.com/acp-gateway/gateway/internal/store"
	acp "github.com/coder/acp-go-sdk"
)

// The services the gateway gives the agent as its ACP client (fs/*, terminal/*, the file listing) live in
// package services; the session hands them what they ask of it (servicesOf) and answers the agent's calls
// through them.

// newServices makes the session's services, its terminals logging their output and exits in its log.
func (s *Session) newServices(openCwd bool) *services.Services {
	cfg := s.cfg
	return services.New(servicesOf{s}, services.Config{
		SessionID: s.ID, Cwd: s.Cwd, OpenCwd: openCwd, MaxFSRequests: cfg.MaxFSRequests, Logger: s.logger,
		Terminals: agentsvc.TerminalConfig{
			MoreDirs: s.AdditionalDirs, Env: cfg.AgentEnv, AgentEnv: s.spec.Env, Confine: s.spec.Confine, Confiner: cfg.Confiner,
			StopGrace: cfg.StopGrace, Max: cfg.MaxTerminalsPerSession, Logger: s.logger,
		},
	})
}

// servicesOf is what the session's services ask of it.
type servicesOf struct{ s *Session }

// MayServe reports whether who may serve the session's tools: nobody (the gateway's own code) or a principal
// allowed to act on it. AccessOf takes shares.mu, never with mu held.
func (v servicesOf) MayServe(who principal.Principal) bool {
	return who.IsZero() || v.s.AccessOf(who) >= access.Act
}

// LogInTurn logs a `_gateway/*` frame, stamped with the running turn if there is one.
func (v servicesOf) LogInTurn(method string, params map[string]any) {
	s := v.s
	s.mu.Lock()
	defer s.mu.Unlock()
	turnID := ""
	if s.state.Turn != nil {
		turnID = s.state.Turn.ID
	}
	s.appendGatewayLocked(method, turnID, params)
}

func (v servicesOf) Usable() error                          { _, err := v.s.usable(); return err }
func (v servicesOf) Reconfine(dir string) (*os.Root, error) { return v.s.host.Reconfine(dir) }

// ReadTextFile implements agents.FSHandler: the delegate's answer, or the gateway's own.
func (s *Session) ReadTextFile(ctx context.Context, params json.RawMessage) (any, *acp.RequestError) {
	return s.svc.ReadTextFile(ctx, params)
}

// WriteTextFile implements agents.FSHandler: the delegate's answer, or the gateway's own.
func (s *Session) WriteTextFile(ctx context.Context, params json.RawMessage) (any, *acp.RequestError) {
	return s.svc.WriteTextFile(ctx, params)
}

// ServeFSLocally serves an agent's fs/* request as the gateway does when no delegate is registered
// (services.Services.ServeFSLocally): a delegate that does not serve a method itself returns this for it.
func (s *Session) ServeFSLocally(ctx context.Context, method string, params json.RawMessage) (any, *acp.RequestError) {
	return s.svc.ServeFSLocally(ctx, method, params)
}

// Terminal implements agents.TerminalHandler: a terminal the gateway runs is served here; anything else goes
// to the delegate, if one is registered, or is served by the gateway.
func (s *Session) Terminal(ctx context.Context, method string, params json.RawMessage) (any, *acp.RequestError) {
	return s.svc.Terminal(ctx, method, params)
}

// ServeTerminalLocally serves a terminal/* request the way the gateway does when no delegate serves it.
func (s *Session) ServeTerminalLocally(ctx context.Context, method string, params json.RawMessage) (any, *acp.RequestError) {
	return s.svc.ServeTerminalLocally(ctx, method, params)
}

// DelegateFS offers d, a connection of who, to serve the session's fs/* (and terminal/*, for a
// TerminalDelegate) until release. The latest offer whose principal may act on the session serves; offering
// d again moves it to the top. Requests no delegate may serve are served by the gateway itself, confined to
// the cwd. A follower offers nothing: the owner's node serves its agent.
func (s *Session) DelegateFS(who principal.Principal, d services.FSDelegate) (release func()) {
	return s.run.DelegateFS(who, d)
}

// ListFilesAs lists the session's files matching opts for who (a collaborator at least): only those who may
// prompt may list, a viewer watches the transcript, not the working directory.
func (s *Session) ListFilesAs(ctx context.Context, who principal.Principal, opts services.FilesOptions) (agentsvc.ListResult, error) {
	if err := opts.Check(); err != nil {
		return agentsvc.ListResult{}, err
	}
	if err := s.allow(who, access.Act); err != nil {
		return agentsvc.ListResult{}, err
	}
	if s.Status() == store.StatusClosed {
		return agentsvc.ListResult{}, sessionerr.ErrClosed
	}
	return s.run.ListFiles(ctx, who, opts)
}
