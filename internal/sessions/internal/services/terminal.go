package services

import (
	"context"
	"encoding/json"

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

// Terminal serves the agent's terminal/* request: a terminal the gateway runs is served here; anything else
// goes to the delegate, if one is registered, or is served by the gateway.
func (sv *Services) Terminal(ctx context.Context, method string, params json.RawMessage) (any, *acp.RequestError) {
	local := func() (any, *acp.RequestError) { return sv.ServeTerminalLocally(ctx, method, params) }
	if method != acp.ClientMethodTerminalCreate && sv.terms.Runs(params) {
		return local()
	}
	return sv.serveDelegated(ctx, func(ctx context.Context, d FSDelegate) (any, *acp.RequestError, bool) {
		td, ok := d.(TerminalDelegate)
		if !ok {
			return nil, nil, false
		}
		res, rerr := td.Terminal(ctx, method, ClientParams(sv.id, params))
		return res, rerr, true
	}, local)
}

// ServeTerminalLocally serves a terminal/* request the way the gateway does when no delegate serves it.
func (sv *Services) ServeTerminalLocally(ctx context.Context, method string, params json.RawMessage) (any, *acp.RequestError) {
	return sv.terms.Serve(ctx, method, params)
}

// logTerminalOutput logs one `_gateway/terminal_output` frame (agentsvc bounds and coalesces them); the
// one past the terminal's budget is the note `{data: "", truncated: true}`.
func (sv *Services) logTerminalOutput(id, data string, truncated bool) {
	params := map[string]any{"terminalId": id, "data": data}
	if truncated {
		params["truncated"] = true
	}
	sv.s.LogInTurn("_gateway/terminal_output", params)
}

// logTerminalExit logs `_gateway/terminal_exit`, after the terminal's last output.
func (sv *Services) logTerminalExit(id string, code *int, sig *string) {
	sv.s.LogInTurn("_gateway/terminal_exit", map[string]any{"terminalId": id, "exitCode": code, "signal": sig})
}
