package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"
)

// strictLog reads a session's whole log as a strict client would (every frame valid UTF-8) and returns it
// joined by newlines.
func strictLog(t *testing.T, g *gateway, id, epoch string) string {
	t.Helper()
	var all bytes.Buffer
	for _, e := range g.fullLogWS(t, id, epoch) {
		if !utf8.Valid(e.Raw) {
			t.Errorf("logged frame %d is not valid UTF-8: %q", e.Seq, e.Raw)
		}
		all.Write(e.Raw)
		all.WriteByte('\n')
	}
	return all.String()
}

// acpCall writes one raw frame on an /acp socket and returns the response with the given id.
func acpCall(t *testing.T, ctx context.Context, c *websocket.Conn, id string, frame []byte) []byte {
	t.Helper()
	if err := c.Write(ctx, websocket.MessageText, frame); err != nil {
		t.Fatalf("write: %v", err)
	}
	for {
		_, data, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("waiting for response %s: %v", id, err)
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(data, &m) == nil && m.Method == "" && string(m.ID) == id {
			return data
		}
	}
}

// TestInvalidUTF8FromClients: raw FF FE from clients never reaches the log. On /acp and /ws a text frame that
// is not UTF-8 closes the socket with 1007; a REST body that is not UTF-8 is a 400; JSON-RPC error replies
// re-encode the client's id instead of echoing its bytes.
func TestInvalidUTF8FromClients(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	g := startGateway(t, "--workdir", dir)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	acp, _, err := websocket.Dial(ctx, g.wsURL("/acp"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer acp.CloseNow()
	acpCall(t, ctx, acp, "1", []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`))
	dirJSON, _ := json.Marshal(dir)
	created := acpCall(t, ctx, acp, "2", []byte(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":`+string(dirJSON)+`,"mcpServers":[]}}`))
	var sn struct {
		Result struct {
			SessionID string `json:"sessionId"`
		} `json:"result"`
	}
	if err := json.Unmarshal(created, &sn); err != nil || sn.Result.SessionID == "" {
		t.Fatalf("session/new: %s", created)
	}
	sid := sn.Result.SessionID

	// An id with a lone surrogate escape comes back re-encoded, as U+FFFD.
	reply := acpCall(t, ctx, acp, "\"\uFFFDx\"", []byte(`{"jsonrpc":"2.0","id":"\ud800x","method":"no/such"}`))
	if !utf8.Valid(reply) {
		t.Fatalf("error reply %q", reply)
	}

	// A prompt whose text frame holds raw FF FE: the socket is closed with 1007 and the prompt never runs.
	if err := acp.Write(ctx, websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"`+sid+`","prompt":[{"type":"text","text":"acp `+"\xff\xfe"+` bytes"}]}}`)); err != nil {
		t.Fatal(err)
	}
	for {
		_, data, err := acp.Read(ctx)
		if err != nil {
			if code := websocket.CloseStatus(err); code != websocket.StatusInvalidFramePayloadData {
				t.Fatalf("/acp socket ended with %v (%v), want 1007", code, err)
			}
			break
		}
		if bytes.Contains(data, []byte(`"id":3`)) {
			t.Fatalf("the invalid prompt was answered instead of closing the socket: %q", data)
		}
	}

	// A REST prompt with raw FF FE in a content block is refused (400 invalid_json) and never runs.
	body := "{\"prompt\":[{\"type\":\"text\",\"text\":\"rest \xff\xfe bytes\"}]}"
	resp, err := http.Post(g.base+"/v1/sessions/"+sid+"/prompt?wait=true", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	problemBody, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !bytes.Contains(problemBody, []byte(`"code":"invalid_json"`)) {
		t.Fatalf("REST prompt with invalid UTF-8: %d %s", resp.StatusCode, problemBody)
	}
	// A valid one runs, so the log has a turn to check.
	if code := g.do("POST", "/v1/sessions/"+sid+"/prompt?wait=true", `{"text":"/echo hello"}`, nil); code != http.StatusOK {
		t.Fatalf("REST prompt: %d", code)
	}

	// /ws: an error reply to an id that is not a string or number carries null; an invalid text frame is 1007.
	w := g.dial("/v1/sessions/" + sid + "/ws")
	w.waitFor("replay_complete", func(f frame) bool { return f.Method == "_gateway/replay_complete" })
	w.send(map[string]any{"jsonrpc": "2.0", "id": map[string]any{"x": 1}, "result": map[string]any{}})
	if f, _ := w.waitFor("error reply", func(f frame) bool { return f.Error != nil }); string(f.ID) != "null" {
		t.Fatalf("error reply echoed id %s, want null", f.ID)
	}
	if err := w.c.Write(ctx, websocket.MessageText, []byte("{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"result\":{}}")); err != nil {
		t.Fatal(err)
	}
	if code := w.waitClosed(); code != websocket.StatusInvalidFramePayloadData {
		t.Fatalf("/ws closed with %v, want 1007", code)
	}

	var s sessionJSON
	g.do("GET", "/v1/sessions/"+sid, nil, &s)
	all := strictLog(t, g, sid, s.Epoch)
	if !strings.Contains(all, "hello") || strings.Contains(all, "acp ") || strings.Contains(all, "rest ") {
		t.Errorf("the log should hold the valid prompt and neither refused one:\n%s", all)
	}
}

// TestInvalidUTF8FromAgent: an agent writing raw FF FE in a message chunk, a tool call, a permission request,
// a non-JSON stdout line and on stderr leaves only valid UTF-8 in the log, on every face, and in the session's
// REST view.
func TestInvalidUTF8FromAgent(t *testing.T) {
	t.Parallel()
	g, _ := testAgentGateway(t, "badutf8")
	s := g.createSession(nil)
	w := g.dial("/v1/sessions/" + s.ID + "/ws")
	if code := g.do("POST", "/v1/sessions/"+s.ID+"/prompt?wait=true", `{"text":"x"}`, nil); code != http.StatusOK {
		t.Fatalf("prompt: %d", code)
	}
	w.waitFor("the permission request", isPermissionRequest)
	w.waitFor("the agent_output note", func(f frame) bool { return f.Method == "_gateway/agent_output" })
	all := strictLog(t, g, s.ID, s.Epoch)
	for _, want := range []string{"bad \uFFFD text", "edit \uFFFD", "/x/\uFFFD", "rm \uFFFD", "Allow \uFFFD", `noise line \ufffd`} {
		if !strings.Contains(all, want) {
			t.Errorf("log lacks %q:\n%s", want, all)
		}
	}
	st := g.openSSE(t, "/v1/sessions/"+s.ID+"/events", nil)
	for _, f := range st.until(isNote("_gateway/replay_complete")) {
		if !utf8.Valid(f.Data) {
			t.Errorf("SSE frame is not valid UTF-8: %q", f.Data)
		}
	}
	resp, err := http.Get(g.base + "/v1/sessions/" + s.ID)
	if err != nil {
		t.Fatal(err)
	}
	view, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !utf8.Valid(view) {
		t.Errorf("session view is not valid UTF-8: %q", view)
	}
}
