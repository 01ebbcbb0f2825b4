package acpws

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/acp-gateway/gateway/internal/acpws/jsonrpc"
	"github.com/acp-gateway/gateway/internal/sessions"
)

// A prompt over the registry's MaxPromptBytes is refused with -32602 on both /acp transports, as REST refuses
// it with 413 prompt_too_large, and starts no turn: the session's log does not grow by it.
func TestPromptOverLimitIsRefused(t *testing.T) {
	e := newEnvCfg(t, Options{}, sessions.Config{MaxPromptBytes: 1000})
	big := strings.Repeat("b", 3000)

	cl := e.dial("/acp")
	cl.initialize()
	sid := cl.newSession(e.dir)
	allow := func(m msg) {
		if m.Method == "session/request_permission" {
			cl.answer(m, "allow-once")
		}
	}
	_, resp := cl.until(cl.request("session/prompt", textPrompt(sid, big)), allow)
	if resp.Error == nil || resp.Error.Code != jsonrpc.InvalidParams || !strings.Contains(resp.Error.Message, "1000") {
		t.Fatalf("WebSocket: an oversize prompt got %s, want -32602 naming the limit", resp.raw)
	}
	_, resp = cl.until(cl.request("session/prompt", textPrompt(sid, "small")), allow)
	if resp.Error != nil {
		t.Fatalf("WebSocket: a prompt under the limit after the refusal: %s", resp.raw)
	}

	hc, _ := e.httpInit("/acp", map[string]any{})
	conn := hc.open("")
	id := hc.request("session/new", map[string]any{"cwd": e.dir, "mcpServers": []any{}}, "")
	_, made := conn.until(id, nil)
	var res struct {
		SessionID string `json:"sessionId"`
	}
	if json.Unmarshal(made.Result, &res) != nil || res.SessionID == "" {
		t.Fatalf("session/new: %s", made.raw)
	}
	hsid := res.SessionID
	stream := hc.open(hsid)
	id = hc.request("session/prompt", textPrompt(hsid, big), hsid)
	_, resp = stream.until(id, func(m msg) {
		if m.Method == "session/request_permission" {
			hc.answer(m, "allow-once", hsid)
		}
	})
	if resp.Error == nil || resp.Error.Code != jsonrpc.InvalidParams {
		t.Fatalf("Streamable HTTP: an oversize prompt got %s, want -32602", resp.raw)
	}
	s, err := e.reg.Get(hsid)
	if err != nil {
		t.Fatal(err)
	}
	rr, err := s.Log().Read(0, 1<<20, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rr.Entries {
		if strings.Contains(string(f.Frame), big) {
			t.Fatalf("the refused prompt reached the session's log at seq %d", f.Seq)
		}
	}
}
