package acpws

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acp-gateway/gateway/internal/sessions"
	"github.com/acp-gateway/gateway/internal/translate/ask"
	"github.com/coder/websocket"
)

// newHTTPSession opens a connection, its connection stream, a session and its session stream.
func newHTTPSession(t *testing.T, e *env, caps map[string]any) (cl *hclient, conn *sse, sid string, sess *sse) {
	t.Helper()
	cl, _ = e.httpInit("/acp", caps)
	conn = cl.open("")
	id := cl.request("session/new", map[string]any{"cwd": e.dir, "mcpServers": []any{}}, "")
	_, resp := conn.until(id, nil)
	var res struct {
		SessionID string `json:"sessionId"`
	}
	if resp.Error != nil || json.Unmarshal(resp.Result, &res) != nil || res.SessionID == "" {
		t.Fatalf("session/new: %s", resp.raw)
	}
	return cl, conn, res.SessionID, cl.open(res.SessionID)
}

// A turn over Streamable HTTP: initialize answers on the POST with the connection id, session/new on the
// connection stream, the turn's updates, its permission request and its answer on the session stream.
func TestHTTPTurnWithPermission(t *testing.T) {
	e := newEnv(t, Options{})
	cl, init := e.httpInit("/acp", map[string]any{})
	var res struct {
		ProtocolVersion   int `json:"protocolVersion"`
		AgentCapabilities struct {
			LoadSession bool `json:"loadSession"`
		} `json:"agentCapabilities"`
	}
	if init.Error != nil || json.Unmarshal(init.Result, &res) != nil || res.ProtocolVersion != 1 || !res.AgentCapabilities.LoadSession {
		t.Fatalf("initialize: %s", init.raw)
	}
	conn := cl.open("")
	id := cl.request("session/new", map[string]any{"cwd": e.dir, "mcpServers": []any{}}, "")
	_, resp := conn.until(id, nil)
	var made struct {
		SessionID string `json:"sessionId"`
	}
	if json.Unmarshal(resp.Result, &made) != nil || made.SessionID == "" {
		t.Fatalf("session/new: %s", resp.raw)
	}
	sid := made.SessionID
	sess := cl.open(sid)
	id = cl.request("session/prompt", textPrompt(sid, "hello over http"), sid)
	asked := 0
	before, resp := sess.until(id, func(m msg) {
		if m.Method == "session/request_permission" {
			asked++
			cl.answer(m, "allow-once", sid)
		}
	})
	if stopReason(t, resp) != "end_turn" || asked != 1 {
		t.Fatalf("turn: %s, %d permission requests", resp.raw, asked)
	}
	k := kinds(before)
	for _, want := range []string{"agent_message_chunk", "tool_call", "tool_call_update", "session/request_permission"} {
		if !slices.Contains(k, want) {
			t.Errorf("the session stream lacks %s: %v", want, k)
		}
	}
	if slices.Contains(k, "user_message_chunk") {
		t.Errorf("the prompt was echoed to its sender: %v", k)
	}
	for _, m := range before {
		if m.Method != "" && m.sessionID() != sid {
			t.Errorf("a frame of another session on the session stream: %s", m.raw)
		}
	}
	// Nothing of the session went to the connection stream.
	if m, ok := conn.tryNext(50 * time.Millisecond); ok {
		t.Errorf("connection stream got %s", m.raw)
	}
}

// Each refusal of the Streamable HTTP face: status, and the stable code of its problem+json (or the
// JSON-RPC error code of a body that is not one message).
func TestHTTPStatusCodes(t *testing.T) {
	e := newEnv(t, Options{ReadLimit: 4096})
	cl, conn, sid, _ := newHTTPSession(t, e, map[string]any{})
	other, err := e.reg.Create(context.Background(), sessions.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	url := cl.url
	withConn := func(h map[string]string) map[string]string {
		h["Acp-Connection-Id"] = cl.conn
		return h
	}
	prompt := func(session string) []byte {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 99, "method": "session/prompt", "params": textPrompt(session, "x")})
		return b
	}
	initBody := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	for _, c := range []struct {
		name    string
		method  string
		url     string
		body    []byte
		headers map[string]string
		status  int
		code    string // problem code
		rpc     int    // JSON-RPC error code of the body
	}{
		{"not JSON", "POST", url, []byte(`{"jsonrpc":"2.0","id":1,"method":`), nil, 400, "", -32700},
		{"not UTF-8", "POST", url, []byte("{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":\"\xff\"}"), nil, 400, "", -32700},
		{"empty body", "POST", url, []byte{}, nil, 400, "", -32700},
		{"batch", "POST", url, []byte(`[{"jsonrpc":"2.0","id":1,"method":"initialize"}]`), nil, 400, "", -32600},
		{"a number", "POST", url, []byte(`5`), nil, 400, "", -32600},
		{"text/plain", "POST", url, initBody, map[string]string{"Content-Type": "text/plain"}, 415, "unsupported_media_type", 0},
		{"too big", "POST", url, []byte(`{"jsonrpc":"2.0","method":"x","params":"` + strings.Repeat("a", 5000) + `"}`), nil, 413, "body_too_large", 0},
		{"no connection id", "POST", url, []byte(`{"jsonrpc":"2.0","id":1,"method":"session/list"}`), nil, 400, "missing_connection_id", 0},
		{"unknown connection", "POST", url, []byte(`{"jsonrpc":"2.0","id":1,"method":"session/list"}`), map[string]string{"Acp-Connection-Id": "nope"}, 404, "unknown_connection", 0},
		{"connection of another agent path", "POST", url + "/other", []byte(`{"jsonrpc":"2.0","id":1,"method":"session/list"}`), withConn(map[string]string{}), 404, "unknown_connection", 0},
		{"initialize on a connection", "POST", url, initBody, withConn(map[string]string{}), 400, "initialize_on_connection", 0},
		{"prompt without Acp-Session-Id", "POST", url, prompt(sid), withConn(map[string]string{}), 400, "missing_session_id", 0},
		{"prompt with another Acp-Session-Id", "POST", url, prompt(sid), withConn(map[string]string{"Acp-Session-Id": other.ID}), 400, "mismatched_session_id", 0},
		{"prompt of a session not attached", "POST", url, prompt(other.ID), withConn(map[string]string{"Acp-Session-Id": other.ID}), 409, "session_not_attached", 0},
		{"unknown agent", "POST", e.srv.URL + "/acp/nope", initBody, nil, 404, "unknown_agent", 0},
		{"PUT", "PUT", url, initBody, nil, 405, "method_not_allowed", 0},
		{"plain GET", "GET", url, nil, nil, 426, "upgrade_required", 0},
		{"stream without connection id", "GET", url, nil, map[string]string{"Accept": "text/event-stream"}, 400, "missing_connection_id", 0},
		{"stream of an unknown connection", "GET", url, nil, map[string]string{"Accept": "text/event-stream", "Acp-Connection-Id": "nope"}, 404, "unknown_connection", 0},
		{"stream without Accept", "GET", url, nil, withConn(map[string]string{}), 406, "not_acceptable", 0},
		{"second receiver", "GET", url, nil, withConn(map[string]string{"Accept": "text/event-stream"}), 409, "stream_taken", 0},
		{"DELETE without connection id", "DELETE", url, nil, nil, 400, "missing_connection_id", 0},
		{"DELETE of an unknown connection", "DELETE", url, nil, map[string]string{"Acp-Connection-Id": "nope"}, 404, "unknown_connection", 0},
	} {
		r := doHTTP(t, c.method, c.url, c.body, c.headers)
		if r.status != c.status {
			t.Errorf("%s: status %d, want %d (%s)", c.name, r.status, c.status, r.body)
			continue
		}
		if c.code != "" {
			if ct := r.header.Get("Content-Type"); ct != "application/problem+json" || r.problemCode() != c.code {
				t.Errorf("%s: %s %s, want problem %s", c.name, ct, r.body, c.code)
			}
		}
		if c.rpc != 0 {
			var m msg
			if json.Unmarshal(r.body, &m) != nil || m.Error == nil || m.Error.Code != c.rpc || string(m.ID) != "null" {
				t.Errorf("%s: body %s, want JSON-RPC error %d with id null", c.name, r.body, c.rpc)
			}
		}
	}
	if r := doHTTP(t, "PUT", url, nil, nil); r.header.Get("Allow") != "DELETE, GET, POST" {
		t.Errorf("405 Allow = %q", r.header.Get("Allow"))
	}
	// Valid JSON that is not a valid message goes to the connection, which answers on its stream as over a
	// WebSocket; the connection lives on.
	if r := cl.post(map[string]any{"jsonrpc": "1.0", "id": 7, "method": "session/list"}, ""); r.status != 202 {
		t.Fatalf("jsonrpc 1.0: %d %s", r.status, r.body)
	}
	if m := conn.next(); m.Error == nil || m.Error.Code != -32600 || string(m.ID) != "7" {
		t.Fatalf("jsonrpc 1.0: %s", m.raw)
	}
	id := cl.request("no/such", map[string]any{}, "")
	if _, m := conn.until(id, nil); m.Error == nil || m.Error.Code != -32601 {
		t.Fatalf("unknown method: %s", m.raw)
	}
}

// The WebSocket transport's 101 carries an Acp-Connection-Id, as the official server's does.
func TestWebSocketUpgradeCarriesConnectionID(t *testing.T) {
	e := newEnv(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, e.base+"/acp", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	if resp.Header.Get("Acp-Connection-Id") == "" {
		t.Fatalf("101 without Acp-Connection-Id: %v", resp.Header)
	}
}

// DELETE ends the connection: its streams end, its id is unknown after, its slot in the connection cap
// (shared with WebSockets) is free again, and its sessions go on.
func TestHTTPDeleteReleases(t *testing.T) {
	e := newEnv(t, Options{MaxConns: 1})
	cl, conn, sid, sess := newHTTPSession(t, e, map[string]any{})
	// At the cap: neither a second HTTP connection nor a WebSocket.
	b := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	if r := doHTTP(t, "POST", cl.url, b, nil); r.status != 503 || r.problemCode() != "too_many_connections" {
		t.Fatalf("second connection at the cap: %d %s", r.status, r.body)
	}
	s, _ := e.reg.Get(sid)
	if n := s.View().Clients; n != 1 {
		t.Fatalf("clients = %d, want 1", n)
	}
	if r := doHTTP(t, "DELETE", cl.url, nil, map[string]string{"Acp-Connection-Id": cl.conn}); r.status != 202 {
		t.Fatalf("DELETE: %d %s", r.status, r.body)
	}
	conn.ended()
	sess.ended()
	if r := cl.post(map[string]any{"jsonrpc": "2.0", "id": 5, "method": "session/list"}, ""); r.status != 404 {
		t.Fatalf("POST after DELETE: %d %s", r.status, r.body)
	}
	waitFor(t, "the session's subscriber to go", func() bool { return s.View().Clients == 0 })
	if s.Status() == "closed" {
		t.Fatal("DELETE closed the session")
	}
	waitFor(t, "the slot to be free", func() bool {
		return doHTTP(t, "POST", cl.url, b, nil).status == 200
	})
}

// A connection with no stream and no request for IdleTimeout ends as a closed WebSocket does: its id is
// unknown after, its sessions go on.
func TestHTTPIdleTimeout(t *testing.T) {
	e := newEnv(t, Options{IdleTimeout: 200 * time.Millisecond})
	cl, conn, sid, sess := newHTTPSession(t, e, map[string]any{})
	s, _ := e.reg.Get(sid)
	conn.close()
	sess.close()
	// Polled without requests: a request is activity.
	waitFor(t, "the idle connection to end", func() bool { return s.View().Clients == 0 })
	if r := cl.post(map[string]any{"jsonrpc": "2.0", "id": 5, "method": "session/list"}, ""); r.status != 404 {
		t.Fatalf("POST after the idle end: %d %s", r.status, r.body)
	}
	if s.Status() == "closed" {
		t.Fatal("the session did not outlive its idle connection")
	}
}

// Frames wait for their stream's receiver at most QueueBytes: a session stream nobody reads ends the
// connection once the writer has waited WriteTimeout for room, and the turn goes on.
func TestHTTPStalledReceiverBounded(t *testing.T) {
	e := newEnv(t, Options{QueueBytes: 2048, WriteTimeout: 300 * time.Millisecond})
	cl, conn, _ := func() (*hclient, *sse, string) {
		cl, _ := e.httpInit("/acp", map[string]any{})
		conn := cl.open("")
		id := cl.request("session/new", map[string]any{"cwd": e.dir, "mcpServers": []any{}}, "")
		_, resp := conn.until(id, nil)
		var res struct {
			SessionID string `json:"sessionId"`
		}
		_ = json.Unmarshal(resp.Result, &res)
		return cl, conn, res.SessionID
	}()
	var sid string
	for _, s := range e.reg.List() {
		sid = s.ID
	}
	// The session stream is never opened: the turn's frames (several KB) queue for it.
	cl.request("session/prompt", textPrompt(sid, strings.Repeat("long prompt ", 200)), sid)
	conn.ended()
	if r := cl.post(map[string]any{"jsonrpc": "2.0", "id": 5, "method": "session/list"}, ""); r.status != 404 {
		t.Fatalf("POST after the connection ended: %d", r.status)
	}
	s, _ := e.reg.Get(sid)
	waitFor(t, "the turn to wait for its permission", func() bool { return len(s.PendingFrames(^uint64(0))) > 0 })
	if s.Status() == "closed" {
		t.Fatal("the session was closed with its connection")
	}
}

// A session stream dropped mid-turn: frames queue until the client opens it again, and session/load on the
// same connection replays the whole turn before its answer, on the session stream.
func TestHTTPDroppedStreamReattach(t *testing.T) {
	e := newEnv(t, Options{})
	cl, _, sid, sess := newHTTPSession(t, e, map[string]any{})
	prompt := cl.request("session/prompt", textPrompt(sid, "drop me"), sid)
	var perm msg
	for perm.Method != "session/request_permission" {
		perm = sess.next()
	}
	// A second receiver is refused while the first holds the stream.
	if s, r := cl.tryOpen(sid); s != nil || r.status != 409 {
		t.Fatalf("second receiver: %d %s, want 409", r.status, r.body)
	}
	sess.close() // dropped mid-turn
	// The server notices the drop when its request context ends. Probing with a GET would make the probe a
	// receiver whose own close the server notices late (409 on the reopen below, or frames written to it),
	// so the test waits on the transport's state instead.
	waitFor(t, "the dropped receiver to let go", func() bool { return !e.acp.streamable.StreamHeld(cl.conn, sid) })
	cl.answer(perm, "allow-once", sid)
	s, _ := e.reg.Get(sid)
	waitFor(t, "the turn to end", func() bool { return s.Status() == "idle" })
	again := cl.open(sid)
	// What was queued meanwhile (the end of the turn, the prompt's answer) comes first.
	rest, resp := again.until(prompt, nil)
	if stopReason(t, resp) != "end_turn" || !slices.Contains(kinds(rest), "agent_message_chunk") {
		t.Fatalf("after the drop: %v then %s", kinds(rest), resp.raw)
	}
	load := cl.request("session/load", map[string]any{"sessionId": sid, "cwd": e.dir, "mcpServers": []any{}}, sid)
	replay, resp := again.until(load, nil)
	if resp.Error != nil {
		t.Fatalf("load: %s", resp.raw)
	}
	k := kinds(replay)
	if u := slices.Index(k, "user_message_chunk"); u < 0 || !slices.Contains(k[u:], "agent_message_chunk") {
		t.Fatalf("load replay: %v", k)
	}
}

// A second connection loads a session made on the first and gets its history before the answer, on the
// session stream; a prompt there is observed by the first connection.
func TestHTTPLoadFromSecondConnection(t *testing.T) {
	e := newEnv(t, Options{})
	cl, _, sid, sess := newHTTPSession(t, e, map[string]any{})
	id := cl.request("session/prompt", textPrompt(sid, "first"), sid)
	if _, resp := sess.until(id, func(m msg) { cl.answer(m, "allow-once", sid) }); stopReason(t, resp) != "end_turn" {
		t.Fatal(resp.raw)
	}
	cl2, _ := e.httpInit("/acp", map[string]any{})
	cl2.open("")
	sess2 := cl2.open(sid)
	load := cl2.request("session/load", map[string]any{"sessionId": sid, "cwd": e.dir, "mcpServers": []any{}}, sid)
	replay, resp := sess2.until(load, nil)
	if k := kinds(replay); resp.Error != nil || !slices.Contains(k, "user_message_chunk") || !slices.Contains(k, "tool_call_update") {
		t.Fatalf("load: %v then %s", kinds(replay), resp.raw)
	}
	id = cl2.request("session/prompt", textPrompt(sid, "second"), sid)
	if _, resp := sess2.until(id, func(m msg) { cl2.answer(m, "allow-once", sid) }); stopReason(t, resp) != "end_turn" {
		t.Fatal(resp.raw)
	}
	for {
		m := sess.next()
		if m.update() == "user_message_chunk" {
			break // the first connection saw the second's prompt
		}
	}
}

// A permission the HTTP client was asked and another client (REST) answered is withdrawn on the session
// stream with $/cancel_request.
func TestHTTPPermissionAnsweredElsewhere(t *testing.T) {
	e := newEnv(t, Options{})
	cl, _, sid, sess := newHTTPSession(t, e, map[string]any{})
	prompt := cl.request("session/prompt", textPrompt(sid, "x"), sid)
	var perm msg
	for perm.Method != "session/request_permission" {
		perm = sess.next()
	}
	var pid string
	_ = json.Unmarshal(perm.ID, &pid)
	s, _ := e.reg.Get(sid)
	var ans ask.ClientAnswer
	ans.Outcome.Outcome, ans.Outcome.OptionID = "selected", "reject-once"
	if _, err := s.Answer(pid, ans, "rest"); err != nil {
		t.Fatal(err)
	}
	before, resp := sess.until(prompt, nil)
	if stopReason(t, resp) != "end_turn" {
		t.Fatal(resp.raw)
	}
	withdrawn := false
	for _, m := range before {
		if m.Method == "$/cancel_request" && strings.Contains(string(m.Params), pid) {
			withdrawn = true
		}
	}
	if !withdrawn {
		t.Fatalf("no $/cancel_request for %s: %v", pid, kinds(before))
	}
}
