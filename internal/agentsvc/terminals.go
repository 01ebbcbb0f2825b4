package agentsvc

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/confine"
	acp "github.com/coder/acp-go-sdk"
	"github.com/google/uuid"
)

// Terminals serves ACP's terminal/* (create, output, wait_for_exit, kill, release) for one session: commands
// run in the session cwd (or a directory inside it), with the agents' environment allowlist plus the
// request's env, each in a process group of its own (terminal_proc.go). Output and exits go to the session
// through TerminalConfig's callbacks, which log them for clients. Terminals are killed on release, and by
// CloseAll (session close, agent exit, shutdown).
type Terminals struct {
	cfg TerminalConfig // Static after construction.

	mu       sync.Mutex
	byID     map[string]*terminal // Guarded by mu; created and not released (nil while starting).
	closed   bool                 // Guarded by mu; CloseAll has begun: no more terminals.
	starting sync.WaitGroup       // Add only under mu while !closed; CloseAll waits for starts in flight.
}

// TerminalConfig is what a session's terminals take from it.
type TerminalConfig struct {
	Workspace *Workspace        // commands run in its cwd or inside it
	MoreDirs  []string          // the session's additionalDirectories: writable by commands too
	Env       []string          // the agents' environment (already allowlisted); a request's env is added
	AgentEnv  map[string]string // the agent's own env from the agents file: trusted for confinement
	Confine   confine.Extra     // what the agent's entry lets its processes use besides the cwd
	Confiner  *confine.Confiner // nil = unconfined
	StopGrace time.Duration     // between SIGTERM and SIGKILL
	Max       int               // terminals held at once
	Logger    *slog.Logger
	// Usable says whether the session can take a new terminal now (its agent is there).
	Usable func() error
	// Output logs one `_gateway/terminal_output` frame; Exit logs `_gateway/terminal_exit` after the last one.
	Output func(id, data string, truncated bool)
	Exit   func(id string, code *int, sig *string)
}

// MaxTerminalOutput bounds the output a terminal keeps (outputByteLimit above it, or absent, is this): the
// terminal/output answer must fit on one JSON-RPC line the agent's SDK accepts.
const MaxTerminalOutput = 1 << 20

// createTerminal is terminal/create's params.
type createTerminal struct {
	Command         string             `json:"command"`
	Args            []string           `json:"args"`
	Env             []agents.NameValue `json:"env"`
	Cwd             *string            `json:"cwd"`
	OutputByteLimit *int               `json:"outputByteLimit"`
}

// NewTerminals returns a session's empty set of terminals.
func NewTerminals(cfg TerminalConfig) *Terminals {
	return &Terminals{cfg: cfg, byID: map[string]*terminal{}}
}

// Serve answers one terminal/* request.
func (ts *Terminals) Serve(ctx context.Context, method string, params json.RawMessage) (any, *acp.RequestError) {
	if method == acp.ClientMethodTerminalCreate {
		return ts.create(params)
	}
	var p struct {
		TerminalID string `json:"terminalId"`
	}
	if json.Unmarshal(params, &p) != nil || p.TerminalID == "" {
		return nil, acp.NewInvalidParams(map[string]any{"error": "terminalId is required"})
	}
	if method == acp.ClientMethodTerminalRelease {
		if !ts.release(p.TerminalID) {
			return nil, unknownTerminal(p.TerminalID)
		}
		return map[string]any{}, nil
	}
	t := ts.get(p.TerminalID)
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

// Runs reports whether the terminal named in params (a terminal/* request other than create) is one of these.
func (ts *Terminals) Runs(params json.RawMessage) bool {
	var p struct {
		TerminalID string `json:"terminalId"`
	}
	_ = json.Unmarshal(params, &p)
	ts.mu.Lock()
	defer ts.mu.Unlock()
	_, ok := ts.byID[p.TerminalID]
	return ok
}

func unknownTerminal(id string) *acp.RequestError {
	return acp.NewInvalidParams(map[string]any{"error": "no terminal with this id in the session (released, or never created)", "terminalId": id})
}

func (ts *Terminals) get(id string) *terminal {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.byID[id]
}

// create checks the request, reserves a slot under the cap and starts the command.
func (ts *Terminals) create(params json.RawMessage) (any, *acp.RequestError) {
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
	limit := MaxTerminalOutput
	if req.OutputByteLimit != nil {
		if *req.OutputByteLimit < 0 {
			return nil, acp.NewInvalidParams(map[string]any{"error": "outputByteLimit must be >= 0"})
		}
		limit = min(*req.OutputByteLimit, MaxTerminalOutput)
	}
	dir, rerr := ts.cfg.Workspace.Dir(req.Cwd)
	if rerr != nil {
		return nil, rerr
	}
	if err := ts.cfg.Usable(); err != nil {
		return nil, acp.NewInternalError(map[string]any{"error": err.Error()})
	}
	id := "term_" + uuid.NewString()
	ts.mu.Lock()
	switch {
	case ts.closed:
		ts.mu.Unlock()
		return nil, acp.NewInternalError(map[string]any{"error": "the session is closing"})
	case len(ts.byID) >= ts.cfg.Max:
		ts.mu.Unlock()
		return nil, acp.NewInternalError(map[string]any{
			"error": fmt.Sprintf("the session already holds %d terminals, its limit; release one first", ts.cfg.Max),
		})
	}
	ts.byID[id] = nil // reserved
	ts.starting.Add(1)
	ts.mu.Unlock()
	defer ts.starting.Done()

	t, err := ts.start(id, req, dir, limit)
	ts.mu.Lock()
	if err != nil {
		delete(ts.byID, id)
		ts.mu.Unlock()
		ts.cfg.Logger.Info("terminal did not start", "err", err)
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
	ts.cfg.Logger.Debug("terminal started", "terminal", id, "pid", t.cmd.Process.Pid)
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
func (ts *Terminals) release(id string) bool {
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

// KillAll kills every terminal, then accepts new ones again: a detached session's agent is gone, and the
// agent a prompt re-attaches may make new terminals.
func (ts *Terminals) KillAll() {
	ts.CloseAll()
	ts.mu.Lock()
	ts.closed = false
	ts.mu.Unlock()
}

// CloseAll kills every terminal and refuses new ones; it returns once all have exited, starts in flight
// included. The session calls it when it closes or its agent goes away.
func (ts *Terminals) CloseAll() {
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
