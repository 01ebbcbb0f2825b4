package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestShutdownTellsClients: a SIGINT (the run context ending) during a turn with a pending permission ends
// the turn `cancelled`, resolves the permission and reports the session's status to every face before its
// socket closes with 1001 (the event stream ends after the same frames): nobody is left guessing why.
func TestShutdownTellsClients(t *testing.T) {
	g, _ := testAgentGateway(t, "perms")
	s := g.createSession(map[string]any{})

	// The raw ACP client attaches and prompts; the agent asks permission for its first tool call.
	acp := g.dial("/acp")
	acp.send(json.RawMessage(acpInitialize))
	acp.waitFor("initialize answer", func(f frame) bool { return string(f.ID) == "1" })
	acp.send(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "session/resume", "params": map[string]any{"sessionId": s.ID}})
	acp.waitFor("resume answer", func(f frame) bool { return string(f.ID) == "2" })
	acp.send(map[string]any{"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": map[string]any{
		"sessionId": s.ID, "prompt": []any{map[string]any{"type": "text", "text": "go"}}}})
	ask, _ := acp.waitFor("permission request on /acp", isPermissionRequest)
	var permID string
	_ = json.Unmarshal(ask.ID, &permID)

	ws := g.dial("/v1/sessions/" + s.ID + "/ws")
	ws.waitFor("permission request on ws", isPermissionRequest)
	sse := g.openSSE(t, "/v1/sessions/"+s.ID+"/events", nil)
	sseSeen := func(what string, pred func(f frame) bool) {
		t.Helper()
		deadline := time.After(30 * time.Second)
		for {
			select {
			case ev, ok := <-sse.ch:
				if !ok {
					t.Fatalf("event stream ended before %s: %v", what, <-sse.err)
				}
				var f frame
				f.Raw = ev.Data
				if ev.Data != nil && json.Unmarshal(ev.Data, &f) == nil && pred(f) {
					return
				}
			case <-deadline:
				t.Fatalf("event stream: no %s", what)
			}
		}
	}
	sseSeen("permission request", isPermissionRequest)

	stopped := make(chan error, 1)
	go func() { stopped <- g.stop() }()

	resolved := func(f frame) bool {
		return f.Method == "_gateway/permission_resolved" && strings.Contains(string(f.Raw), permID)
	}
	cancelled := func(f frame) bool { return f.Method == "_gateway/turn_ended" && f.Params.StopReason == "cancelled" }
	status := func(f frame) bool { return f.Method == "_gateway/session_status" }

	// The session socket: every frame that says why, then 1001.
	ws.waitFor("permission_resolved", resolved)
	ws.waitFor("turn_ended cancelled", cancelled)
	ws.waitFor("session_status", status)
	if code := ws.waitClosed(); code != websocket.StatusGoingAway {
		t.Errorf("ws closed with %d, want 1001\n%s", code, ws.dump())
	}

	// The event stream: the same frames, then its end.
	sseSeen("permission_resolved", resolved)
	sseSeen("turn_ended cancelled", cancelled)
	sseSeen("session_status", status)

	// The raw ACP client: its request withdrawn, its prompt answered `cancelled`, then 1001.
	acp.waitFor("$/cancel_request", func(f frame) bool { return f.Method == "$/cancel_request" && strings.Contains(string(f.Raw), permID) })
	acp.waitFor("prompt answered cancelled", func(f frame) bool {
		return string(f.ID) == "3" && strings.Contains(string(f.Raw), `"stopReason":"cancelled"`)
	})
	if code := acp.waitClosed(); code != websocket.StatusGoingAway {
		t.Errorf("/acp closed with %d, want 1001\n%s", code, acp.dump())
	}
	if err := <-stopped; err != nil {
		t.Errorf("run: %v", err)
	}
}
