package core

import (
	"context"
	"encoding/json"

	"github.com/acp-gateway/gateway/internal/agentsvc"
	acp "github.com/coder/acp-go-sdk"
)

// The gateway is the agents' ACP client, so it serves terminal/* itself (agentsvc.Terminals): output streams to
// clients as `_gateway/terminal_output {terminalId, data}` frames and the end as `_gateway/terminal_exit
// {terminalId, exitCode, signal}`. An `/acp` client that advertised `terminal: true` can serve them instead
// (TerminalDelegate).

// TerminalDelegate is implemented by an fs delegate (Session.DelegateFS) that also serves the agent's
// terminal/* requests: an `/acp` client that advertised `clientCapabilities.terminal`. Params carry the
// gateway's session id. A delegate that does not serve terminals answers with Session.ServeTerminalLocally.
type TerminalDelegate interface {
	Terminal(ctx context.Context, method string, params json.RawMessage) (any, *acp.RequestError)
}

// newTerminals is the session's set of terminals, logging their output and exits in its log.
func (s *Session) newTerminals() *agentsvc.Terminals {
	cfg := s.cfg
	return agentsvc.NewTerminals(agentsvc.TerminalConfig{
		Workspace: s.workspace, MoreDirs: s.AdditionalDirs, Env: cfg.AgentEnv, AgentEnv: s.spec.Env, Confine: s.spec.Confine, Confiner: cfg.Confiner,
		StopGrace: cfg.StopGrace, Max: cfg.MaxTerminalsPerSession, Logger: s.logger,
		Usable: func() error { _, err := s.usable(); return err },
		Output: s.logTerminalOutput, Exit: s.logTerminalExit,
	})
}

// Terminal implements agents.TerminalHandler: a terminal the gateway runs is served here; anything else goes
// to the delegate, if one is registered, or is served by the gateway.
func (s *Session) Terminal(ctx context.Context, method string, params json.RawMessage) (any, *acp.RequestError) {
	local := func() (any, *acp.RequestError) { return s.ServeTerminalLocally(ctx, method, params) }
	if method != acp.ClientMethodTerminalCreate && s.terms.Runs(params) {
		return local()
	}
	return s.serveDelegated(ctx, func(ctx context.Context, d FSDelegate) (any, *acp.RequestError, bool) {
		td, ok := d.(TerminalDelegate)
		if !ok {
			return nil, nil, false
		}
		res, rerr := td.Terminal(ctx, method, s.clientParams(params))
		return res, rerr, true
	}, local)
}

// ServeTerminalLocally serves a terminal/* request the way the gateway does when no delegate serves it.
func (s *Session) ServeTerminalLocally(ctx context.Context, method string, params json.RawMessage) (any, *acp.RequestError) {
	return s.terms.Serve(ctx, method, params)
}

// logTerminalOutput logs one `_gateway/terminal_output` frame (agentsvc bounds and coalesces them); the
// one past the terminal's budget is the note `{data: "", truncated: true}`.
func (s *Session) logTerminalOutput(id, data string, truncated bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	turnID := ""
	if s.turn != nil {
		turnID = s.turn.ID
	}
	params := map[string]any{"terminalId": id, "data": data}
	if truncated {
		params["truncated"] = true
	}
	s.appendGatewayLocked("_gateway/terminal_output", turnID, params)
}

// logTerminalExit logs `_gateway/terminal_exit`, after the terminal's last output.
func (s *Session) logTerminalExit(id string, code *int, sig *string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	turnID := ""
	if s.turn != nil {
		turnID = s.turn.ID
	}
	s.appendGatewayLocked("_gateway/terminal_exit", turnID, map[string]any{"terminalId": id, "exitCode": code, "signal": sig})
}
