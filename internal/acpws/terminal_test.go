package acpws

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/sessions"
)

// An `/acp` client that advertised `clientCapabilities.terminal` is delegated the agents' terminal/* (as fs/*
// is): the gateway runs no process, the client's answers go back to the agent. The agent is internal/testagent
// in term mode: its prompt is a list of terminal steps, its answer their results.

func termEnv(t *testing.T) *env {
	t.Helper()
	spec := agents.Spec{Name: "term", Kind: agents.KindACP, Command: testAgentBinary(t), Args: []string{"-mode", "term"}}
	return newEnvCfg(t, Options{}, sessions.Config{}, spec)
}

// terminalClient answers terminal/* as an editor with its own terminals would, and records what it was asked.
type terminalClient struct {
	t    *testing.T
	cl   *client
	mu   sync.Mutex
	seen []msg
}

func (b *terminalClient) onRequest(m msg) {
	b.mu.Lock()
	b.seen = append(b.seen, m)
	b.mu.Unlock()
	var res any
	switch m.Method {
	case "terminal/create":
		res = map[string]any{"terminalId": "browser-term-1"}
	case "terminal/output":
		res = map[string]any{"output": "from the browser", "truncated": false}
	case "terminal/wait_for_exit":
		res = map[string]any{"exitCode": 3}
	case "terminal/kill", "terminal/release":
		res = map[string]any{}
	default:
		b.t.Errorf("unexpected request %s", m.raw)
		return
	}
	b.cl.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": res})
}

type stepResult struct {
	Op         string
	TerminalID string
	Result     struct {
		Output   string
		ExitCode *int
	}
	Error json.RawMessage
}

func termSteps(t *testing.T, cl *client, sid string, onRequest func(msg), steps ...map[string]any) []stepResult {
	t.Helper()
	text, _ := json.Marshal(steps)
	var out []stepResult
	got := runScript(t, cl, sid, string(text), onRequest)
	if err := json.Unmarshal([]byte(got), &out); err != nil || len(out) != len(steps) {
		t.Fatalf("agent reported %q: %v", got, err)
	}
	return out
}

func TestTerminalDelegatedToClient(t *testing.T) {
	for _, caps := range []map[string]any{
		{"terminal": true},
		{"terminal": true, "fs": map[string]any{"readTextFile": true}},
	} {
		e := termEnv(t)
		cl := e.dial("/acp/term")
		cl.mustResult("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": caps}, nil)
		sid := cl.newSession(e.dir)
		b := &terminalClient{t: t, cl: cl}
		r := termSteps(t, cl, sid, b.onRequest,
			map[string]any{"op": "create", "command": "make", "args": []string{"test"}},
			map[string]any{"op": "output"}, map[string]any{"op": "wait"}, map[string]any{"op": "kill"}, map[string]any{"op": "release"})
		for _, x := range r {
			if x.Error != nil {
				t.Fatalf("caps %v: %s: %s", caps, x.Op, x.Error)
			}
		}
		if r[0].TerminalID != "browser-term-1" || r[1].Result.Output != "from the browser" || r[2].Result.ExitCode == nil || *r[2].Result.ExitCode != 3 {
			t.Fatalf("caps %v: the agent got %+v", caps, r)
		}
		var methods []string
		for _, m := range b.seen {
			methods = append(methods, m.Method)
			var p struct {
				SessionID  string `json:"sessionId"`
				TerminalID string `json:"terminalId"`
				Command    string `json:"command"`
			}
			if json.Unmarshal(m.Params, &p) != nil || p.SessionID != sid || m.Method != "terminal/create" && p.TerminalID != "browser-term-1" {
				t.Fatalf("%s params %s: want the gateway session id and the client's terminal id", m.Method, m.Params)
			}
		}
		if want := "terminal/create,terminal/output,terminal/wait_for_exit,terminal/kill,terminal/release"; strings.Join(methods, ",") != want {
			t.Fatalf("caps %v: the client was asked %v", caps, methods)
		}
	}
}

// TestTerminalNotDelegatedWithoutCapability: a client that advertised fs but not terminal is never asked for
// terminals: the gateway runs them.
func TestTerminalNotDelegatedWithoutCapability(t *testing.T) {
	e := termEnv(t)
	cl := e.dial("/acp/term")
	cl.initFS(true, true)
	sid := cl.newSession(e.dir)
	r := termSteps(t, cl, sid, noRequests(t),
		map[string]any{"op": "create", "command": testAgentBinary(t), "args": []string{"-print", "from the gateway"}},
		map[string]any{"op": "wait"}, map[string]any{"op": "output"}, map[string]any{"op": "release"})
	if !strings.HasPrefix(r[0].TerminalID, "term_") || r[2].Result.Output != "from the gateway" || r[3].Error != nil {
		t.Fatalf("the agent got %+v", r)
	}
}
