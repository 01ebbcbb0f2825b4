package sessions

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/acp-gateway/gateway/internal/agents"
	acp "github.com/coder/acp-go-sdk"
	"github.com/google/uuid"
)

// The gateway is the agents' ACP client, so it serves terminal/* (create, output, wait_for_exit, kill,
// release) itself: commands run in the session cwd (or a directory inside it), with the agents' environment
// allowlist plus the request's env, each in a process group of its own (terminal_proc.go). Output streams to
// clients as `_gateway/terminal_output {terminalId, data}` frames and the end as `_gateway/terminal_exit
// {terminalId, exitCode, signal}`. Terminals are killed on release, session close, agent exit and shutdown.
// An `/acp` client that advertised `terminal: true` can serve them instead (TerminalDelegate).

// maxTerminalOutput bounds the output a terminal keeps (outputByteLimit above it, or absent, is this): the
// terminal/output answer must fit on one JSON-RPC line the agent's SDK accepts.
const maxTerminalOutput = 1 << 20

// TerminalDelegate is implemented by an fs delegate (Session.DelegateFS) that also serves the agent's
// terminal/* requests: an `/acp` client that advertised `clientCapabilities.terminal`. Params carry the
// gateway's session id. A delegate that does not serve terminals answers with Session.ServeTerminalLocally.
type TerminalDelegate interface {
	Terminal(ctx context.Context, method string, params json.RawMessage) (any, *acp.RequestError)
}

// createTerminal is terminal/create's params.
type createTerminal struct {
	Command         string             `json:"command"`
	Args            []string           `json:"args"`
	Env             []agents.NameValue `json:"env"`
	Cwd             *string            `json:"cwd"`
	OutputByteLimit *int               `json:"outputByteLimit"`
}

// terminals are a session's terminals. Owned by the session; closeAll ends them.
type terminals struct {
	s *Session // Static after construction.

	mu       sync.Mutex
	byID     map[string]*terminal // Guarded by mu; created and not released (nil while starting).
	closed   bool                 // Guarded by mu; closeAll has begun: no more terminals.
	starting sync.WaitGroup       // Add only under mu while !closed; closeAll waits for starts in flight.
}

func newTerminals(s *Session) *terminals {
	return &terminals{s: s, byID: map[string]*terminal{}}
}

// Terminal implements agents.TerminalHandler: a terminal the gateway runs is served here; anything else goes
// to the delegate, if one is registered, or is served by the gateway.
func (s *Session) Terminal(ctx context.Context, method string, params json.RawMessage) (any, *acp.RequestError) {
	local := func() (any, *acp.RequestError) { return s.ServeTerminalLocally(ctx, method, params) }
	if method != acp.ClientMethodTerminalCreate && s.terms.has(terminalID(params)) {
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
	if method == acp.ClientMethodTerminalCreate {
		return s.terms.create(params)
	}
	var p struct {
		TerminalID string `json:"terminalId"`
	}
	if json.Unmarshal(params, &p) != nil || p.TerminalID == "" {
		return nil, acp.NewInvalidParams(map[string]any{"error": "terminalId is required"})
	}
	if method == acp.ClientMethodTerminalRelease {
		if !s.terms.release(p.TerminalID) {
			return nil, unknownTerminal(p.TerminalID)
		}
		return map[string]any{}, nil
	}
	t := s.terms.get(p.TerminalID)
	if t == nil {
		return nil, unknownTerminal(p.TerminalID)
	}
	switch method {
	case acp.ClientMethodTerminalOutput:
		out, truncated, exited, code, sig := t.status()
		res := map[string]any{"output": out, "truncated": truncated}
		if exited {
			res["exitStatus"] = map[string]any{"exitCode": code, "signal": sig}
		}
		return res, nil
	case acp.ClientMethodTerminalWaitForExit:
		select {
		case <-t.exited:
		case <-ctx.Done():
			return nil, acp.NewRequestCancelled(nil)
		}
		_, _, _, code, sig := t.status()
		return map[string]any{"exitCode": code, "signal": sig}, nil
	case acp.ClientMethodTerminalKill:
		t.kill()
		return map[string]any{}, nil
	}
	return nil, acp.NewMethodNotFound(method)
}

func terminalID(params json.RawMessage) string {
	var p struct {
		TerminalID string `json:"terminalId"`
	}
	_ = json.Unmarshal(params, &p)
	return p.TerminalID
}

func unknownTerminal(id string) *acp.RequestError {
	return acp.NewInvalidParams(map[string]any{"error": "no terminal with this id in the session (released, or never created)", "terminalId": id})
}

func (ts *terminals) has(id string) bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	_, ok := ts.byID[id]
	return ok
}

func (ts *terminals) get(id string) *terminal {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.byID[id]
}

// create checks the request, reserves a slot under the cap and starts the command.
func (ts *terminals) create(params json.RawMessage) (any, *acp.RequestError) {
	s := ts.s
	var req createTerminal
	if err := json.Unmarshal(params, &req); err != nil || req.Command == "" {
		return nil, acp.NewInvalidParams(map[string]any{"error": "terminal/create needs a command (a string), args (strings), env ({name, value}) and cwd (a string)"})
	}
	if strings.IndexByte(req.Command, 0) >= 0 {
		return nil, acp.NewInvalidParams(map[string]any{"error": "command holds a NUL byte"})
	}
	for _, e := range req.Env {
		if e.Name == "" || strings.ContainsAny(e.Name, "=\x00") || strings.IndexByte(e.Value, 0) >= 0 {
			return nil, acp.NewInvalidParams(map[string]any{"error": "env entries need a name without '=' and values without NUL"})
		}
	}
	limit := maxTerminalOutput
	if req.OutputByteLimit != nil {
		if *req.OutputByteLimit < 0 {
			return nil, acp.NewInvalidParams(map[string]any{"error": "outputByteLimit must be >= 0"})
		}
		limit = min(*req.OutputByteLimit, maxTerminalOutput)
	}
	dir, rerr := s.terminalDir(req.Cwd)
	if rerr != nil {
		return nil, rerr
	}
	if _, err := s.usable(); err != nil {
		return nil, acp.NewInternalError(map[string]any{"error": err.Error()})
	}
	id := "term_" + uuid.NewString()
	ts.mu.Lock()
	switch {
	case ts.closed:
		ts.mu.Unlock()
		return nil, acp.NewInternalError(map[string]any{"error": "the session is closing"})
	case len(ts.byID) >= s.reg.cfg.MaxTerminalsPerSession:
		ts.mu.Unlock()
		return nil, acp.NewInternalError(map[string]any{
			"error": fmt.Sprintf("the session already holds %d terminals, its limit; release one first", s.reg.cfg.MaxTerminalsPerSession),
		})
	}
	ts.byID[id] = nil // reserved
	ts.starting.Add(1)
	ts.mu.Unlock()
	defer ts.starting.Done()

	t, err := startTerminal(s, id, req, dir, limit)
	ts.mu.Lock()
	if err != nil {
		delete(ts.byID, id)
		ts.mu.Unlock()
		s.logger.Info("terminal did not start", "err", err)
		return nil, acp.NewInternalError(map[string]any{"error": "cannot start the command: " + startErrorText(err)})
	}
	if ts.closed {
		delete(ts.byID, id)
		ts.mu.Unlock()
		t.kill()
		return nil, acp.NewInternalError(map[string]any{"error": "the session is closing"})
	}
	ts.byID[id] = t
	ts.mu.Unlock()
	s.logger.Debug("terminal started", "terminal", id, "pid", t.cmd.Process.Pid)
	return map[string]any{"terminalId": id}, nil
}

// startErrorText says why a command did not start without naming the gateway's paths beyond the command.
func startErrorText(err error) string {
	switch {
	case os.IsNotExist(err), strings.Contains(err.Error(), "executable file not found"):
		return "the command was not found"
	case os.IsPermission(err):
		return "permission denied"
	}
	return "the system refused to run it"
}

// release kills the terminal (if it still runs) and forgets it, freeing its slot.
func (ts *terminals) release(id string) bool {
	ts.mu.Lock()
	t, ok := ts.byID[id]
	if !ok || t == nil {
		ts.mu.Unlock()
		return false
	}
	delete(ts.byID, id)
	ts.mu.Unlock()
	t.kill()
	return true
}

// killAll kills every terminal, then accepts new ones again: a detached session's agent is gone, and the
// agent a prompt re-attaches may make new terminals.
func (ts *terminals) killAll() {
	ts.closeAll()
	ts.mu.Lock()
	ts.closed = false
	ts.mu.Unlock()
}

// closeAll kills every terminal and refuses new ones; it returns once all have exited, starts in flight
// included. The session calls it when it closes or its agent goes away.
func (ts *terminals) closeAll() {
	ts.mu.Lock()
	ts.closed = true
	list := make([]*terminal, 0, len(ts.byID))
	for _, t := range ts.byID {
		if t != nil {
			list = append(list, t)
		}
	}
	ts.mu.Unlock()
	var wg sync.WaitGroup
	for _, t := range list {
		wg.Go(t.kill)
	}
	wg.Wait()
	ts.starting.Wait()
}

// terminalDir resolves terminal/create's cwd inside the session cwd (absent = the session cwd): absolute, and
// with its symlinks resolved still inside, and a directory.
func (s *Session) terminalDir(cwd *string) (string, *acp.RequestError) {
	if cwd == nil || *cwd == "" {
		return s.Cwd, nil
	}
	base, rel, rerr := s.confinePath(*cwd)
	if rerr != nil {
		return "", rerr
	}
	real, err := filepath.EvalSymlinks(filepath.Join(base, rel))
	if err != nil {
		return "", acp.NewInvalidParams(map[string]any{"error": "cwd does not exist"})
	}
	root, err := filepath.EvalSymlinks(s.Cwd)
	if err != nil || !within(root, real) {
		return "", outsideErr()
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return "", acp.NewInvalidParams(map[string]any{"error": "cwd is not a directory"})
	}
	return real, nil
}

// logTerminalOutput logs one `_gateway/terminal_output` frame (terminalLog bounds and coalesces them); the
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
