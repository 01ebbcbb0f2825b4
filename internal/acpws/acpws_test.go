package acpws

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acp-gateway/gateway/internal/agents/demo"
	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/sessions"
	"github.com/acp-gateway/gateway/internal/store"
	"github.com/acp-gateway/gateway/internal/translate/ask"
	"github.com/coder/websocket"
)

// runTurn prompts sid and answers the demo agent's permission request with optionID. It returns every
// message before the prompt response, and the response.
func runTurn(t *testing.T, cl *client, sid, text, optionID string) ([]msg, msg) {
	t.Helper()
	id := cl.request("session/prompt", textPrompt(sid, text))
	return cl.until(id, func(m msg) {
		if m.Method == "session/request_permission" {
			cl.answer(m, optionID)
		}
	})
}

func stopReason(t *testing.T, resp msg) string {
	t.Helper()
	if resp.Error != nil {
		t.Fatalf("prompt failed: %d %s %s", resp.Error.Code, resp.Error.Message, resp.Error.Data)
	}
	var r struct {
		StopReason string `json:"stopReason"`
	}
	if err := json.Unmarshal(resp.Result, &r); err != nil {
		t.Fatal(err)
	}
	return r.StopReason
}

func TestInitializeNewPromptPermissionEndTurn(t *testing.T) {
	e := newEnv(t, Options{})
	cl := e.dial("/acp")

	init := cl.initialize()
	if init["protocolVersion"] != float64(1) {
		t.Fatalf("protocolVersion = %v", init["protocolVersion"])
	}
	caps := init["agentCapabilities"].(map[string]any)
	if caps["loadSession"] != true {
		t.Fatalf("loadSession = %v", caps["loadSession"])
	}
	sc := caps["sessionCapabilities"].(map[string]any)
	for _, k := range []string{"list", "resume", "close"} {
		if _, ok := sc[k]; !ok {
			t.Errorf("sessionCapabilities.%s missing: %v", k, sc)
		}
	}
	if am, ok := init["authMethods"].([]any); !ok || len(am) != 0 {
		t.Errorf("authMethods = %v", init["authMethods"])
	}

	sid := cl.newSession(e.dir)
	s, err := e.reg.Get(sid)
	if err != nil {
		t.Fatalf("session/new did not create a registry session: %v", err)
	}

	// Now that a demo session exists, initialize reports the agent's own info.
	cl2 := e.dial("/acp")
	if info := cl2.initialize()["agentInfo"].(map[string]any); info["name"] == "acp-gateway" {
		t.Errorf("agentInfo is the gateway's although a demo session is live: %v", info)
	}

	var perms []msg
	id := cl.request("session/prompt", textPrompt(sid, "hello gateway"))
	before, resp := cl.until(id, func(m msg) {
		if m.Method == "session/request_permission" {
			perms = append(perms, m)
			var p struct {
				SessionID string `json:"sessionId"`
				Options   []struct {
					OptionID string `json:"optionId"`
				} `json:"options"`
			}
			_ = json.Unmarshal(m.Params, &p)
			if p.SessionID != sid || len(p.Options) != 3 {
				t.Errorf("permission request params: %s", m.Params)
			}
			if pending := s.PendingPermissions(); len(pending) != 1 {
				t.Errorf("pending permissions = %d", len(pending))
			} else if `"`+pending[0].ID+`"` != string(m.ID) {
				t.Errorf("request id %s is not the gateway permission id %s", m.ID, pending[0].ID)
			}
			cl.answer(m, "allow-once")
		}
	})
	if got := stopReason(t, resp); got != "end_turn" {
		t.Fatalf("stopReason = %q", got)
	}
	if len(perms) != 1 {
		t.Fatalf("permission requests = %d", len(perms))
	}
	if slices.Contains(kinds(before), "$/cancel_request") {
		t.Errorf("the request this client answered was withdrawn: %v", kinds(before))
	}
	ks := kinds(before)
	for _, k := range ks {
		if strings.HasPrefix(k, "_gateway/") {
			t.Errorf("gateway frame forwarded: %v", ks)
		}
		if k == "user_message_chunk" {
			t.Errorf("the prompt was echoed to its sender: %v", ks)
		}
	}
	for _, want := range []string{"available_commands_update", "agent_thought_chunk", "agent_message_chunk", "plan", "tool_call", "tool_call_update", "usage_update", "session/request_permission"} {
		if !slices.Contains(ks, want) {
			t.Errorf("no %s among %v", want, ks)
		}
	}
	for _, m := range before {
		if m.Method == "session/update" && m.sessionID() != sid {
			t.Errorf("update for session %q, want %q", m.sessionID(), sid)
		}
	}
	// The edit was applied: a completed tool_call_update for edit_1 arrived before the response.
	var applied bool
	for _, m := range before {
		if m.update() == "tool_call_update" && strings.Contains(string(m.Params), `"edit_1"`) && strings.Contains(string(m.Params), `"completed"`) {
			applied = true
		}
	}
	if !applied {
		t.Errorf("edit_1 not completed before the prompt response: %v", ks)
	}
	var text strings.Builder
	for _, m := range before {
		if m.update() == "agent_message_chunk" {
			var p struct {
				Update struct {
					Content struct {
						Text string `json:"text"`
					} `json:"content"`
				} `json:"update"`
			}
			_ = json.Unmarshal(m.Params, &p)
			text.WriteString(p.Update.Content.Text)
		}
	}
	if want := "You said: hello gateway" + demo.ClosingApplied; text.String() != want {
		t.Errorf("agent text = %q, want %q", text.String(), want)
	}
	if s.Status() != store.StatusIdle {
		t.Errorf("status after the turn = %s", s.Status())
	}
}

func TestErrors(t *testing.T) {
	e := newEnv(t, Options{ReadLimit: 4096})
	cl := e.dial("/acp")

	expectErr := func(name string, code int, id json.RawMessage) msg {
		t.Helper()
		m := cl.next()
		if m.Error == nil || m.Error.Code != code {
			t.Fatalf("%s: got %s, want error %d", name, m.raw, code)
		}
		if string(m.ID) != string(id) {
			t.Fatalf("%s: id %s, want %s", name, m.ID, id)
		}
		return m
	}
	null := json.RawMessage("null")

	cl.sendRaw(websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":1,"method":`))
	expectErr("malformed JSON", -32700, null)
	cl.sendRaw(websocket.MessageText, []byte(`[1,2]`))
	expectErr("batch", -32600, null)
	cl.sendRaw(websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":{"x":1},"method":"initialize"}`))
	expectErr("object id", -32600, null)
	cl.sendRaw(websocket.MessageText, []byte(`{"jsonrpc":"1.0","id":7,"method":"initialize","params":{"protocolVersion":1}}`))
	expectErr("jsonrpc 1.0", -32600, json.RawMessage("7"))

	id := cl.request("no/such_method", map[string]any{})
	expectErr("unknown method", -32601, id)
	// Unknown notifications are ignored: the next message answers the next request.
	cl.notify("_vendor/whatever", map[string]any{})

	for _, c := range []struct {
		name   string
		method string
		params any
	}{
		{"initialize without params", "initialize", nil},
		{"initialize with a string version", "initialize", map[string]any{"protocolVersion": "1"}},
		{"new without cwd", "session/new", map[string]any{"mcpServers": []any{}}},
		{"new with relative cwd", "session/new", map[string]any{"cwd": "rel/dir", "mcpServers": []any{}}},
		{"new with cwd number", "session/new", map[string]any{"cwd": 5, "mcpServers": []any{}}},
		{"new with mcpServers object", "session/new", map[string]any{"cwd": e.dir, "mcpServers": map[string]any{}}},
		{"new with a missing directory", "session/new", map[string]any{"cwd": e.dir + "/nope", "mcpServers": []any{}}},
		{"new with an MCP server without a name", "session/new", map[string]any{"cwd": e.dir, "mcpServers": []any{map[string]any{"command": "x"}}}},
		{"new with an MCP server of an unknown type", "session/new", map[string]any{"cwd": e.dir, "mcpServers": []any{map[string]any{"type": "ws", "name": "a", "url": "ws://x"}}}},
		{"new with MCP env as an object", "session/new", map[string]any{"cwd": e.dir, "mcpServers": []any{map[string]any{"name": "a", "command": "x", "env": map[string]any{"K": "v"}}}}},
		{"new with a client stdio MCP server", "session/new", map[string]any{"cwd": e.dir, "mcpServers": []any{map[string]any{"name": "a", "command": "x", "args": []any{}, "env": []any{}}}}},
		{"new with an http MCP server the agent does not support", "session/new", map[string]any{"cwd": e.dir, "mcpServers": []any{map[string]any{"type": "http", "name": "a", "url": "http://127.0.0.1:9/", "headers": []any{}}}}},
		{"new with two MCP servers of one name", "session/new", map[string]any{"cwd": e.dir, "mcpServers": []any{
			map[string]any{"type": "http", "name": "a", "url": "http://x/"}, map[string]any{"type": "sse", "name": "a", "url": "http://x/"}}}},
		{"load without sessionId", "session/load", map[string]any{"cwd": e.dir, "mcpServers": []any{}}},
		{"prompt without sessionId", "session/prompt", map[string]any{"prompt": []any{}}},
		{"set_mode with a numeric sessionId", "session/set_mode", map[string]any{"sessionId": 5, "modeId": "plan"}},
		{"list with a bad cursor", "session/list", map[string]any{"cursor": "!!"}},
		{"list with a relative cwd", "session/list", map[string]any{"cwd": "x"}},
		{"authenticate without methodId", "authenticate", map[string]any{}},
	} {
		id := cl.request(c.method, c.params)
		expectErr(c.name, -32602, id)
	}
	id = cl.request("session/load", map[string]any{"sessionId": "no-such-session", "cwd": e.dir, "mcpServers": []any{}})
	expectErr("load of an unknown session", -32002, id)
	id = cl.request("session/prompt", textPrompt("no-such-session", "hi"))
	expectErr("prompt of an unknown session", -32002, id)
	id = cl.request("authenticate", map[string]any{"methodId": "x"})
	expectErr("authenticate before a session", -32601, id)

	// A session created elsewhere cannot be prompted before it is attached.
	other, err := e.reg.Create(context.Background(), sessions.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	id = cl.request("session/prompt", textPrompt(other.ID, "hi"))
	expectErr("prompt of a session not attached", -32602, id)

	// A second prompt while a turn runs (the demo agent waits for the permission answer).
	sid := cl.newSession(e.dir)
	first := cl.request("session/prompt", textPrompt(sid, "long turn"))
	var perm msg
	for perm.Method != "session/request_permission" {
		perm = cl.next()
	}
	id = cl.request("session/prompt", textPrompt(sid, "second"))
	for {
		m := cl.next()
		if m.isResponse() && string(m.ID) == string(id) {
			if m.Error == nil || m.Error.Code != -32602 || m.Error.Message != "a turn is already running" {
				t.Fatalf("second prompt: %s", m.raw)
			}
			break
		}
	}
	cl.answer(perm, "reject-once")
	if _, resp := cl.until(first, nil); stopReason(t, resp) != "end_turn" {
		t.Fatalf("first prompt: %s", resp.raw)
	}
	// A late answer to the resolved request is ignored; the socket lives on.
	cl.answer(perm, "allow-once")
	cl.initialize()

	// Binary frame: 1003.
	cl.sendRaw(websocket.MessageBinary, []byte(`{}`))
	if _, err := cl.tryNext(stepTimeout); websocket.CloseStatus(err) != websocket.StatusUnsupportedData {
		t.Fatalf("binary frame: %v, want close 1003", err)
	}

	// Frame over the limit: 1009.
	cl2 := e.dial("/acp")
	cl2.sendRaw(websocket.MessageText, []byte(`{"jsonrpc":"2.0","method":"x","params":"`+strings.Repeat("a", 5000)+`"}`))
	var tooBig websocket.CloseError
	if _, err := cl2.tryNext(stepTimeout); !errors.As(err, &tooBig) || tooBig.Code != websocket.StatusMessageTooBig || tooBig.Reason != "frame too big" {
		t.Fatalf("big frame: %v, want close 1009 %q", err, "frame too big")
	}

	// Unknown agent: 404 before the upgrade.
	ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
	defer cancel()
	_, resp, err := websocket.Dial(ctx, e.base+"/acp/nope", nil)
	if err == nil || resp == nil || resp.StatusCode != 404 {
		t.Fatalf("unknown agent: err %v", err)
	}
	// In the API's error format, like every refusal before an upgrade.
	var p struct{ Code string }
	body, _ := io.ReadAll(resp.Body)
	if ct := resp.Header.Get("Content-Type"); ct != "application/problem+json" || json.Unmarshal(body, &p) != nil || p.Code != "unknown_agent" {
		t.Fatalf("unknown agent: %s %q, want problem+json unknown_agent", ct, body)
	}
}

// A session created over REST is loaded over /acp, prompted there and observed on /v1/sessions/{id}/ws at
// the same time.
func TestLoadRESTSessionObservedOnWS(t *testing.T) {
	e := newEnv(t, Options{})
	s, err := e.reg.Create(context.Background(), sessions.CreateOptions{Cwd: e.dir})
	if err != nil {
		t.Fatal(err)
	}
	// The demo agent sends available_commands_update after session/new's answer: wait for it in the log, so
	// the load replays it instead of the turn carrying it.
	waitFor(t, "available_commands_update in the log", func() bool {
		r, err := s.Log().Read(0, 64, nil)
		return err == nil && slices.ContainsFunc(r.Entries, func(e eventlog.Entry) bool {
			return bytes.Contains(e.Frame, []byte(`"available_commands_update"`))
		})
	})
	observer := e.dialObserver("/v1/sessions/" + s.ID + "/ws")
	cl := e.dial("/acp")
	cl.initialize()
	before := cl.mustResult("session/load", map[string]any{"sessionId": s.ID, "cwd": e.dir, "mcpServers": []any{}}, nil)
	for _, m := range before {
		if m.Method != "session/update" {
			t.Errorf("load replay: unexpected %s", m.raw)
		}
	}

	msgs, resp := runTurn(t, cl, s.ID, "shared session", "allow-once")
	if got := stopReason(t, resp); got != "end_turn" {
		t.Fatalf("stopReason = %q", got)
	}
	var acpUpdates []string
	for _, m := range msgs {
		if m.Method == "session/update" {
			acpUpdates = append(acpUpdates, string(m.raw))
		}
	}

	// The observer sees the same frames (byte for byte) plus the gateway's own, and the user message.
	var wsUpdates []string
	var resolvedBy string
	sawUser := false
	for {
		m := observer.next()
		if m.Method == "session/update" {
			if m.update() == "available_commands_update" {
				continue // sent before the turn; the /acp client got it in the load replay
			}
			if m.update() == "user_message_chunk" {
				sawUser = true
				continue
			}
			wsUpdates = append(wsUpdates, string(m.raw))
		}
		if m.Method == "_gateway/permission_resolved" {
			var p struct {
				By string `json:"by"`
			}
			_ = json.Unmarshal(m.Params, &p)
			resolvedBy = p.By
		}
		if m.Method == "_gateway/turn_ended" {
			break
		}
	}
	if !sawUser {
		t.Error("observer did not see the user message")
	}
	if resolvedBy != "acp" {
		t.Errorf("permission resolved by %q, want acp", resolvedBy)
	}
	if !slices.Equal(acpUpdates, wsUpdates) {
		t.Errorf("frames differ:\n/acp: %v\n/ws:  %v", acpUpdates, wsUpdates)
	}
}

// session/load replays the whole transcript before its response, for a session whose turn ran on another
// socket; resume does not replay.
func TestLoadReplaysBeforeResponse(t *testing.T) {
	e := newEnv(t, Options{})
	a := e.dial("/acp")
	a.initialize()
	sid := a.newSession(e.dir)
	live, resp := runTurn(t, a, sid, "first turn", "allow-once")
	if stopReason(t, resp) != "end_turn" {
		t.Fatal(resp.raw)
	}
	var liveUpdates []string
	for _, m := range live {
		if m.Method == "session/update" {
			liveUpdates = append(liveUpdates, string(m.raw))
		}
	}

	b := e.dial("/acp")
	b.initialize()
	replay := b.mustResult("session/load", map[string]any{"sessionId": sid, "cwd": e.dir, "mcpServers": []any{}}, nil)
	var replayed []string
	var users int
	for _, m := range replay {
		if m.Method != "session/update" {
			t.Fatalf("load replay carried %s", m.raw)
		}
		if m.update() == "user_message_chunk" {
			users++
			if !strings.Contains(string(m.raw), "first turn") {
				t.Errorf("user message: %s", m.raw)
			}
			continue
		}
		replayed = append(replayed, string(m.raw))
	}
	if users != 1 {
		t.Errorf("replayed %d user chunks, want 1", users)
	}
	if !slices.Equal(replayed, liveUpdates) {
		t.Errorf("replay differs from the live frames:\nlive:   %v\nreplay: %v", kinds(live), kinds(replay))
	}

	// b prompts the loaded session; a (still attached) sees b's user message and the updates.
	id := b.request("session/prompt", textPrompt(sid, "quick"))
	_, bresp := b.until(id, nil)
	if stopReason(t, bresp) != "end_turn" {
		t.Fatal(bresp.raw)
	}
	var sawUser, sawChunk bool
	for !sawChunk {
		m := a.next()
		switch m.update() {
		case "user_message_chunk":
			sawUser = true
		case "agent_message_chunk":
			sawChunk = true
		}
	}
	if !sawUser {
		t.Error("a did not see the user message of b's prompt")
	}

	// resume: no replay.
	c := e.dial("/acp")
	before := c.mustResult("session/resume", map[string]any{"sessionId": sid, "cwd": e.dir}, nil)
	if len(before) != 0 {
		t.Errorf("resume replayed %v", kinds(before))
	}
	id = c.request("session/prompt", textPrompt(sid, "quick"))
	msgs, cresp := c.until(id, nil)
	if stopReason(t, cresp) != "end_turn" || !slices.Contains(kinds(msgs), "agent_message_chunk") {
		t.Errorf("after resume: %v %s", kinds(msgs), cresp.raw)
	}
}

// Closing the socket leaves the session and its turn running; the permission can then be answered over REST.
func TestCloseSocketLeavesTurnRunning(t *testing.T) {
	e := newEnv(t, Options{})
	cl := e.dial("/acp")
	cl.initialize()
	sid := cl.newSession(e.dir)
	cl.request("session/prompt", textPrompt(sid, "keep going"))
	for cl.next().Method != "session/request_permission" {
	}
	cl.c.Close(websocket.StatusNormalClosure, "bye")

	s, err := e.reg.Get(sid)
	if err != nil {
		t.Fatalf("session gone after the socket closed: %v", err)
	}
	time.Sleep(50 * time.Millisecond)
	turn := s.CurrentTurn()
	if turn == nil || s.Status() != store.StatusRunning {
		t.Fatalf("turn not running after the socket closed (status %s)", s.Status())
	}
	pending := s.PendingPermissions()
	if len(pending) != 1 {
		t.Fatalf("pending = %d", len(pending))
	}
	var ans ask.ClientAnswer
	ans.Outcome.Outcome, ans.Outcome.OptionID = "selected", "allow-once"
	if _, err := s.Answer(pending[0].ID, ans, "rest"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-turn.Done():
	case <-time.After(stepTimeout):
		t.Fatal("turn did not end")
	}
	if r := turn.Result(); r.StopReason != "end_turn" || r.Err != nil {
		t.Fatalf("turn result %+v", r)
	}
}

// A permission answered over REST first: the ACP client's later answer is ignored and the turn completes.
func TestPermissionAnsweredElsewhere(t *testing.T) {
	e := newEnv(t, Options{})
	cl := e.dial("/acp")
	cl.initialize()
	sid := cl.newSession(e.dir)
	s, _ := e.reg.Get(sid)
	id := cl.request("session/prompt", textPrompt(sid, "race"))
	var perm msg
	for perm.Method != "session/request_permission" {
		perm = cl.next()
	}
	var pid string
	_ = json.Unmarshal(perm.ID, &pid)
	var ans ask.ClientAnswer
	ans.Outcome.Outcome, ans.Outcome.OptionID = "selected", "reject-once"
	if _, err := s.Answer(pid, ans, "rest"); err != nil {
		t.Fatal(err)
	}
	// The request is withdrawn from the ACP client with $/cancel_request.
	for {
		m := cl.next()
		if m.isResponse() {
			t.Fatalf("response before $/cancel_request: %s", m.raw)
		}
		if m.Method == "$/cancel_request" {
			if !strings.Contains(string(m.Params), `"requestId":"`+pid+`"`) {
				t.Fatalf("cancel_request: %s", m.raw)
			}
			break
		}
	}
	cl.answer(perm, "allow-once") // late: ignored
	msgs, resp := cl.until(id, nil)
	if stopReason(t, resp) != "end_turn" {
		t.Fatal(resp.raw)
	}
	for _, m := range msgs {
		if m.update() == "tool_call_update" && strings.Contains(string(m.Params), `"edit_1"`) && strings.Contains(string(m.Params), `"completed"`) {
			t.Errorf("the late allow was applied: %s", m.raw)
		}
	}
}

// A pending permission request is re-sent after session/load's response to a client that attaches later.
func TestLoadSendsPendingPermissionAfterResponse(t *testing.T) {
	e := newEnv(t, Options{})
	a := e.dial("/acp")
	a.initialize()
	sid := a.newSession(e.dir)
	id := a.request("session/prompt", textPrompt(sid, "pending"))
	for a.next().Method != "session/request_permission" {
	}
	b := e.dial("/acp")
	before := b.mustResult("session/load", map[string]any{"sessionId": sid, "cwd": e.dir, "mcpServers": []any{}}, nil)
	if slices.Contains(kinds(before), "session/request_permission") {
		t.Fatalf("permission request inside the replay: %v", kinds(before))
	}
	perm := b.next()
	if perm.Method != "session/request_permission" {
		t.Fatalf("after load: %s", perm.raw)
	}
	b.answer(perm, "allow-once")
	_, resp := a.until(id, nil)
	if stopReason(t, resp) != "end_turn" {
		t.Fatal(resp.raw)
	}
}

func TestCancelModeConfigListClose(t *testing.T) {
	e := newEnv(t, Options{ListPageSize: 2})
	cl := e.dial("/acp")
	cl.initialize()
	sid := cl.newSession(e.dir)

	// set_mode: the agent's current_mode_update arrives before the response.
	before := cl.mustResult("session/set_mode", map[string]any{"sessionId": sid, "modeId": "plan"}, nil)
	if !slices.Contains(kinds(before), "current_mode_update") {
		t.Errorf("set_mode: no current_mode_update before the response: %v", kinds(before))
	}
	var cfg struct {
		ConfigOptions []map[string]any `json:"configOptions"`
	}
	before = cl.mustResult("session/set_config_option", map[string]any{"sessionId": sid, "configId": "style", "value": "fancy"}, &cfg)
	if len(cfg.ConfigOptions) != 1 || cfg.ConfigOptions[0]["currentValue"] != "fancy" {
		t.Errorf("configOptions = %v", cfg.ConfigOptions)
	}
	if !slices.Contains(kinds(before), "config_option_update") {
		t.Errorf("set_config_option: no config_option_update before the response: %v", kinds(before))
	}

	// cancel while the permission is pending: stopReason cancelled.
	id := cl.request("session/prompt", textPrompt(sid, "to be cancelled"))
	for cl.next().Method != "session/request_permission" {
	}
	cl.notify("session/cancel", map[string]any{"sessionId": sid})
	if _, resp := cl.until(id, nil); stopReason(t, resp) != "cancelled" {
		t.Fatalf("cancel: %s", resp.raw)
	}

	// list: 3 demo sessions (+1 of another agent, not listed), two pages.
	for range 2 {
		if _, err := e.reg.Create(context.Background(), sessions.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.reg.Create(context.Background(), sessions.CreateOptions{Agent: "other"}); err != nil {
		t.Fatal(err)
	}
	type listRes struct {
		Sessions []struct {
			SessionID string `json:"sessionId"`
			Cwd       string `json:"cwd"`
		} `json:"sessions"`
		NextCursor string `json:"nextCursor"`
	}
	var p1, p2 listRes
	cl.mustResult("session/list", map[string]any{}, &p1)
	if len(p1.Sessions) != 2 || p1.NextCursor == "" || p1.Sessions[0].SessionID != sid {
		t.Fatalf("page 1: %+v", p1)
	}
	cl.mustResult("session/list", map[string]any{"cursor": p1.NextCursor}, &p2)
	if len(p2.Sessions) != 1 || p2.NextCursor != "" {
		t.Fatalf("page 2: %+v", p2)
	}
	seen := map[string]bool{}
	for _, s := range append(p1.Sessions, p2.Sessions...) {
		seen[s.SessionID] = true
	}
	if len(seen) != 3 {
		t.Errorf("listed %d distinct sessions", len(seen))
	}
	var none listRes
	cl.mustResult("session/list", map[string]any{"cwd": "/nonexistent"}, &none)
	if len(none.Sessions) != 0 {
		t.Errorf("cwd filter: %+v", none)
	}
	// /acp/other lists only the other agent's session.
	o := e.dial("/acp/other")
	var po listRes
	o.mustResult("session/list", nil, &po)
	if len(po.Sessions) != 1 {
		t.Errorf("/acp/other list: %+v", po)
	}

	// close: the session leaves the registry; later requests get -32002 or "not attached".
	cl.mustResult("session/close", map[string]any{"sessionId": sid}, nil)
	if _, err := e.reg.Get(sid); err == nil {
		t.Error("session still in the registry after session/close")
	}
	_, resp := cl.call("session/prompt", textPrompt(sid, "after close"))
	if resp.Error == nil || resp.Error.Code != -32002 {
		t.Errorf("prompt after close: %s", resp.raw)
	}
}

// Shutdown closes sockets with 1001 while requests are in flight, and every goroutine ends.
func TestShutdownClosesWithGoingAway(t *testing.T) {
	e := newEnv(t, Options{})
	cl := e.dial("/acp")
	cl.initialize()
	sid := cl.newSession(e.dir)
	cl.request("session/prompt", textPrompt(sid, "in flight"))
	for cl.next().Method != "session/request_permission" {
	}
	ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- e.acp.Shutdown(ctx) }()
	for {
		_, err := cl.tryNext(stepTimeout)
		if err == nil {
			continue // frames already queued
		}
		if websocket.CloseStatus(err) != websocket.StatusGoingAway {
			t.Fatalf("after shutdown: %v, want 1001", err)
		}
		break
	}
	if err := <-done; err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	// A new socket is refused before the upgrade, in the API's error format.
	_, resp, err := websocket.Dial(ctx, e.base+"/acp", nil)
	if err == nil || resp == nil {
		t.Fatalf("upgrade after shutdown: %v", err)
	}
	var p struct{ Code string }
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 503 || resp.Header.Get("Content-Type") != "application/problem+json" || json.Unmarshal(body, &p) != nil || p.Code != "shutting_down" {
		t.Fatalf("upgrade after shutdown: %d %s %q, want 503 problem+json shutting_down", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	// The session and its turn are the registry's business: still running.
	if s, err := e.reg.Get(sid); err != nil || s.CurrentTurn() == nil {
		t.Fatalf("session or turn gone after the face shut down: %v", err)
	}
}

// /acp/{agent} picks the agent of new sessions; initialize answers with the agent's own info, also before a
// session of that agent exists (probe_test.go); authenticate goes to the attached session's agent, whose error
// passes through.
func TestAgentPathInitializeAuthenticate(t *testing.T) {
	e := newEnv(t, Options{Version: "9.9.9"})
	cl := e.dial("/acp/other")
	init := cl.initialize()
	info := init["agentInfo"].(map[string]any)
	if info["name"] != "demo" {
		t.Errorf("agentInfo without a session = %v, want the demo agent's", info)
	}
	sid := cl.newSession(e.dir)
	s, err := e.reg.Get(sid)
	if err != nil || s.Agent != "other" {
		t.Fatalf("session of agent %q (%v), want other", s.Agent, err)
	}
	init = e.dial("/acp/other").initialize()
	if info := init["agentInfo"].(map[string]any); info["name"] == "acp-gateway" {
		t.Errorf("agentInfo with a live session = %v", info)
	}
	gw := init["agentCapabilities"].(map[string]any)["_meta"].(map[string]any)["gateway"].(map[string]any)
	if gw["agent"] != "other" || gw["agentCapabilities"] == nil {
		t.Errorf("_meta.gateway = %v", gw)
	}
	_, resp := cl.call("authenticate", map[string]any{"methodId": "whatever"})
	if resp.Error == nil || resp.Error.Code != -32602 {
		t.Fatalf("authenticate: %s", resp.raw)
	}
	// A policy chosen through _meta.gateway.permissionPolicy.
	var res struct {
		SessionID string `json:"sessionId"`
	}
	cl.mustResult("session/new", map[string]any{"cwd": e.dir, "mcpServers": []any{}, "_meta": map[string]any{"gateway": map[string]any{"permissionPolicy": "approve-all"}}}, &res)
	s2, _ := e.reg.Get(res.SessionID)
	if s2 == nil || s2.Policy != sessions.PolicyApproveAll {
		t.Fatalf("policy not applied")
	}
	msgs, resp := runTurn(t, cl, res.SessionID, "auto approved", "allow-once")
	if stopReason(t, resp) != "end_turn" || slices.Contains(kinds(msgs), "session/request_permission") {
		t.Errorf("approve-all turn: %v", kinds(msgs))
	}
}

// session/load replays the snapshot's transcript when asked to, and when the log no longer starts at seq 1.
func TestLoadTranscriptReplay(t *testing.T) {
	for _, c := range []struct {
		name string
		opts Options
		cfg  sessions.Config
	}{
		{"option", Options{LoadReplay: ReplayTranscript}, sessions.Config{}},
		{"trimmed log", Options{}, sessions.Config{Log: eventlog.LogLimits{MaxFrames: 12}}}, // a full turn is ~25 frames; a "quick" one fits
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnvCfg(t, c.opts, c.cfg)
			// The turn runs through the session API (a live socket could not keep up with a 12-frame log).
			s, err := e.reg.Create(context.Background(), sessions.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			sid := s.ID
			b0, _ := json.Marshal(map[string]string{"type": "text", "text": "transcript please"})
			turn, err := s.Prompt([]json.RawMessage{b0})
			if err != nil {
				t.Fatal(err)
			}
			waitFor(t, "a permission request", func() bool { return len(s.PendingPermissions()) > 0 })
			var ans ask.ClientAnswer
			ans.Outcome.Outcome, ans.Outcome.OptionID = "selected", "allow-once"
			if _, err := s.Answer(s.PendingPermissions()[0].ID, ans, "rest"); err != nil {
				t.Fatal(err)
			}
			<-turn.Done()
			b := e.dial("/acp")
			replay := b.mustResult("session/load", map[string]any{"sessionId": sid, "cwd": e.dir, "mcpServers": []any{}}, nil)
			ks := kinds(replay)
			for _, want := range []string{"user_message_chunk", "agent_message_chunk", "tool_call", "plan"} {
				if !slices.Contains(ks, want) {
					t.Errorf("no %s in the transcript: %v", want, ks)
				}
			}
			if slices.Contains(ks, "agent_thought_chunk") || slices.Contains(ks, "tool_call_update") {
				t.Errorf("transcript is not compact: %v", ks)
			}
			for _, m := range replay {
				if m.sessionID() != sid {
					t.Errorf("replayed update for %q", m.sessionID())
				}
			}
			// Live frames follow the transcript.
			id := b.request("session/prompt", textPrompt(sid, "quick"))
			msgs, resp := b.until(id, nil)
			if stopReason(t, resp) != "end_turn" || !slices.Contains(kinds(msgs), "agent_message_chunk") {
				t.Errorf("after a transcript load: %v", kinds(msgs))
			}
		})
	}
}
