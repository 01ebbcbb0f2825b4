package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// An `/acp` client that advertised fs and terminal capabilities serves the agent's fs/* and terminal/* of the
// sessions it attaches, but only while its principal may act on the session (owner, collaborator, admin). The
// agent is the test agent in term mode (a real process): its prompt is a list of fs and terminal steps, its
// answer their results.

// toolClient is a raw `/acp` socket that advertised fs and terminal: requests from the gateway arrive on
// reqs, `$/cancel_request` notifications on cancels, and call waits for the response to its own request.
type toolClient struct {
	t       *testing.T
	c       *websocket.Conn
	reqs    chan toolRequest
	cancels chan json.RawMessage

	mu      sync.Mutex
	next    int
	waiting map[int]chan rpcReply
}

// toolRequest is a request the gateway sent the client (fs/*, terminal/*).
type toolRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

func dialToolClient(t *testing.T, g *gateway, hdr map[string]string) *toolClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h := http.Header{}
	for k, v := range hdr {
		h.Set(k, v)
	}
	c, _, err := websocket.Dial(ctx, g.wsURL("/acp"), &websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		t.Fatalf("dial /acp: %v", err)
	}
	c.SetReadLimit(64 << 20)
	tc := &toolClient{t: t, c: c, reqs: make(chan toolRequest, 64), cancels: make(chan json.RawMessage, 64), waiting: map[int]chan rpcReply{}}
	done := make(chan struct{})
	go tc.readLoop(done)
	t.Cleanup(func() { c.CloseNow(); <-done })
	caps := map[string]any{"fs": map[string]any{"readTextFile": true, "writeTextFile": true}, "terminal": true}
	if r := tc.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": caps}); r.Error != nil {
		t.Fatalf("initialize: %+v", r.Error)
	}
	return tc
}

func (tc *toolClient) readLoop(done chan struct{}) {
	defer close(done)
	for {
		_, data, err := tc.c.Read(context.Background())
		if err != nil {
			return
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			rpcReply
		}
		if json.Unmarshal(data, &m) != nil {
			continue
		}
		switch {
		case m.Method == "$/cancel_request":
			tc.cancels <- m.Params
		case m.Method != "" && len(m.ID) > 0:
			tc.reqs <- toolRequest{ID: m.ID, Method: m.Method, Params: m.Params}
		case m.Method == "" && len(m.ID) > 0:
			var id int
			if json.Unmarshal(m.ID, &id) != nil {
				continue
			}
			tc.mu.Lock()
			ch := tc.waiting[id]
			delete(tc.waiting, id)
			tc.mu.Unlock()
			if ch != nil {
				ch <- m.rpcReply
			}
		}
	}
}

func (tc *toolClient) send(v any) {
	tc.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, _ := json.Marshal(v)
	if err := tc.c.Write(ctx, websocket.MessageText, b); err != nil {
		tc.t.Fatalf("write: %v", err)
	}
}

func (tc *toolClient) call(method string, params any) rpcReply {
	tc.t.Helper()
	ch := make(chan rpcReply, 1)
	tc.mu.Lock()
	tc.next++
	id := tc.next
	tc.waiting[id] = ch
	tc.mu.Unlock()
	tc.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	select {
	case r := <-ch:
		return r
	case <-time.After(30 * time.Second):
		tc.t.Fatalf("%s: no response", method)
		return rpcReply{}
	}
}

// answer sends the client's result for a request the gateway sent it.
func (tc *toolClient) answer(r toolRequest, result any) {
	tc.t.Helper()
	tc.send(map[string]any{"jsonrpc": "2.0", "id": r.ID, "result": result})
}

// nextRequest waits for the gateway's next request to the client.
func (tc *toolClient) nextRequest(what string) toolRequest {
	tc.t.Helper()
	select {
	case r := <-tc.reqs:
		return r
	case <-time.After(30 * time.Second):
		tc.t.Fatalf("%s: the client was sent no request", what)
		return toolRequest{}
	}
}

// noRequests fails when the client was sent any request.
func (tc *toolClient) noRequests(what string) {
	tc.t.Helper()
	select {
	case r := <-tc.reqs:
		tc.t.Fatalf("%s: the client was sent %s %s", what, r.Method, r.Params)
	default:
	}
}

// toolStep is one result the term-mode agent reports.
type toolStep struct {
	Op         string
	TerminalID string
	Result     struct {
		Content, Output string
	}
	Error json.RawMessage
}

// promptSteps starts ann's prompt of steps (REST, ?wait=true) and returns a channel with what the agent
// reported, or the failure as the step's error.
func promptSteps(g *gateway, sid string, hdr map[string]string, steps ...map[string]any) <-chan []toolStep {
	text, _ := json.Marshal(steps)
	body, _ := json.Marshal(map[string]string{"text": string(text)})
	out := make(chan []toolStep, 1)
	go func() {
		fail := func(msg string) { out <- []toolStep{{Op: "failed", Error: json.RawMessage(`"` + msg + `"`)}} }
		req, _ := http.NewRequest("POST", g.base+"/v1/sessions/"+sid+"/prompt?wait=true", bytes.NewReader(body))
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			fail(err.Error())
			return
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		var res struct{ StopReason, Text string }
		if json.Unmarshal(data, &res) != nil || resp.StatusCode != http.StatusOK {
			fail(resp.Status)
			return
		}
		var r []toolStep
		if err := json.Unmarshal([]byte(res.Text), &r); err != nil {
			fail("report: " + res.Text)
			return
		}
		out <- r
	}()
	return out
}

func stepsOf(t *testing.T, ch <-chan []toolStep) []toolStep {
	t.Helper()
	select {
	case r := <-ch:
		if len(r) > 0 && r[0].Op == "failed" {
			t.Fatalf("prompt failed: %s", r[0].Error)
		}
		return r
	case <-time.After(60 * time.Second):
		t.Fatal("the prompt did not end")
		return nil
	}
}

// toolGateway runs a gateway with ann, bob and root and the term-mode test agent; ann's session in cwd holds
// a.txt ("from disk") and is shared with bob as role.
func toolGateway(t *testing.T, role string) (g *gateway, sid, cwd string) {
	t.Helper()
	cwd = t.TempDir()
	if err := os.WriteFile(filepath.Join(cwd, "a.txt"), []byte("from disk"), 0o644); err != nil {
		t.Fatal(err)
	}
	g, _ = startWithUsers(t, "--workdir", cwd, "--agent", "ta="+testAgentBinary(t)+" -mode term", "--default-agent", "ta")
	sid = g.createSessionWith(as("ann"))
	if st, _, body := g.request("PUT", "/v1/sessions/"+sid+"/shares/bob", []byte(`{"role":"`+role+`"}`), as("ann")); st != 200 {
		t.Fatalf("share: %d %s", st, body)
	}
	return g, sid, cwd
}

// TestViewerIsNotDelegatedTheOwnersTools: bob, a viewer, loads ann's session over `/acp` with fs and terminal
// capabilities; the agent's fs/read_text_file and terminal/create during ann's turn never reach him (he
// would answer with injected content): the gateway serves them from ann's cwd.
func TestViewerIsNotDelegatedTheOwnersTools(t *testing.T) {
	g, sid, cwd := toolGateway(t, "viewer")
	bob := dialToolClient(t, g, as("bob"))
	if r := bob.call("session/load", map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}}); r.Error != nil {
		t.Fatalf("viewer loads: %+v", r.Error)
	}
	done := promptSteps(g, sid, as("ann"),
		map[string]any{"op": "read", "path": filepath.Join(cwd, "a.txt")},
		map[string]any{"op": "create", "command": testAgentBinary(t), "args": []string{"-print", "from the gateway"}},
		map[string]any{"op": "wait"}, map[string]any{"op": "output"}, map[string]any{"op": "release"})
	var r []toolStep
	for r == nil {
		select {
		case r = <-done:
		case req := <-bob.reqs: // answered as an attacker would, so a failing gateway shows what it let through
			switch req.Method {
			case "fs/read_text_file":
				bob.answer(req, map[string]any{"content": "injected by the viewer"})
			case "terminal/create":
				bob.answer(req, map[string]any{"terminalId": "viewer-term"})
			case "terminal/output":
				bob.answer(req, map[string]any{"output": "fake output", "truncated": false})
			case "terminal/wait_for_exit":
				bob.answer(req, map[string]any{"exitCode": 0})
			default:
				bob.answer(req, map[string]any{})
			}
			t.Errorf("the viewer was sent %s %s", req.Method, req.Params)
		case <-time.After(60 * time.Second):
			t.Fatal("the prompt did not end")
		}
	}
	if len(r) != 5 || r[0].Result.Content != "from disk" || !strings.HasPrefix(r[1].TerminalID, "term_") || r[3].Result.Output != "from the gateway" {
		t.Fatalf("the agent got %+v, want the gateway's file and terminal", r)
	}
}

// TestDowngradeTakesTheToolsBack: bob, a collaborator, serves the agent's fs/* while ann's turn runs. Ann
// makes him a viewer while he holds a request: the agent gets the gateway's answer at once and bob's late
// answer goes nowhere; later requests never reach him. Made a collaborator again he serves again; an
// unshare while he holds a request takes it back the same way.
func TestDowngradeTakesTheToolsBack(t *testing.T) {
	g, sid, cwd := toolGateway(t, "collaborator")
	bob := dialToolClient(t, g, as("bob"))
	if r := bob.call("session/load", map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}}); r.Error != nil {
		t.Fatalf("collaborator loads: %+v", r.Error)
	}
	read := map[string]any{"op": "read", "path": filepath.Join(cwd, "a.txt")}
	share := "/v1/sessions/" + sid + "/shares/bob"

	// A collaborator serves.
	done := promptSteps(g, sid, as("ann"), read)
	req := bob.nextRequest("collaborator")
	if req.Method != "fs/read_text_file" {
		t.Fatalf("collaborator was sent %s", req.Method)
	}
	bob.answer(req, map[string]any{"content": "from bob's editor"})
	if r := stepsOf(t, done); r[0].Result.Content != "from bob's editor" {
		t.Fatalf("collaborator's read: %+v", r)
	}

	// Downgraded while he holds a request: taken back at once.
	done = promptSteps(g, sid, as("ann"), read)
	req = bob.nextRequest("collaborator, before the downgrade")
	if st, _, body := g.request("PUT", share, []byte(`{"role":"viewer"}`), as("ann")); st != 200 {
		t.Fatalf("downgrade: %d %s", st, body)
	}
	// Bob answers once told: an answer that reaches the gateway before it withdraws the request ends the
	// call, and a client that has answered is not told.
	select {
	case <-bob.cancels:
	case <-time.After(30 * time.Second):
		t.Fatal("bob was not told the request was withdrawn")
	}
	bob.answer(req, map[string]any{"content": "injected after the downgrade"})
	if r := stepsOf(t, done); r[0].Result.Content != "from disk" {
		t.Fatalf("the read bob held when he was made a viewer: %+v, want the gateway's", r)
	}
	r := stepsOf(t, promptSteps(g, sid, as("ann"), read,
		map[string]any{"op": "create", "command": testAgentBinary(t), "args": []string{"-print", "from the gateway"}},
		map[string]any{"op": "wait"}, map[string]any{"op": "output"}, map[string]any{"op": "release"}))
	if r[0].Result.Content != "from disk" || !strings.HasPrefix(r[1].TerminalID, "term_") || r[3].Result.Output != "from the gateway" {
		t.Fatalf("after the downgrade the agent got %+v", r)
	}
	bob.noRequests("viewer")

	// A collaborator again, then unshared while he holds a request.
	if st, _, body := g.request("PUT", share, []byte(`{"role":"collaborator"}`), as("ann")); st != 200 {
		t.Fatalf("upgrade: %d %s", st, body)
	}
	done = promptSteps(g, sid, as("ann"), read)
	req = bob.nextRequest("collaborator again")
	if st, _, body := g.request("DELETE", share, nil, as("ann")); st != 204 {
		t.Fatalf("unshare: %d %s", st, body)
	}
	bob.answer(req, map[string]any{"content": "injected after the unshare"})
	if r := stepsOf(t, done); r[0].Result.Content != "from disk" {
		t.Fatalf("the read bob held when the share ended: %+v, want the gateway's", r)
	}
}
