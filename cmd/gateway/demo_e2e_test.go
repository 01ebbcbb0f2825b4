package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/coder/websocket"
)

// TestDemoTurnOverRESTAndWebSocket drives one whole turn of the built-in agent: prompt over REST, watch the
// stream on a WebSocket, answer the permission on the socket, and check the frames and the REST answer.
func TestDemoTurnOverRESTAndWebSocket(t *testing.T) {
	g := startGateway(t)
	s := g.createSession(map[string]any{})
	if s.Agent != "demo" || s.Status != "idle" || s.Epoch == "" || len(s.Modes) == 0 || len(s.ConfigOptions) == 0 || len(s.AgentInfo) == 0 {
		t.Fatalf("unexpected session %+v", s)
	}
	w := g.dial("/v1/sessions/" + s.ID + "/ws")
	w.waitFor("replay_complete", func(f frame) bool { return f.Method == "_gateway/replay_complete" })

	var started struct{ TurnID string }
	if code := g.do("POST", "/v1/sessions/"+s.ID+"/prompt", `{"text":"hello gateway world"}`, &started); code != http.StatusAccepted || started.TurnID == "" {
		t.Fatalf("prompt: %d %+v", code, started)
	}
	// A second prompt while the turn runs is refused.
	var prob struct{ Code, Type string }
	if code := g.do("POST", "/v1/sessions/"+s.ID+"/prompt", `{"text":"again"}`, &prob); code != http.StatusConflict || prob.Code != "turn_running" {
		t.Fatalf("second prompt: %d %+v", code, prob)
	}
	perm, _ := w.waitFor("permission request", isPermissionRequest)
	var permID string
	_ = json.Unmarshal(perm.ID, &permID)
	if permID == "" || perm.Params.Meta.Gateway.PermissionID != permID || perm.Params.SessionID != s.ID {
		t.Fatalf("permission frame %s", perm.Raw)
	}
	w.send(map[string]any{"jsonrpc": "2.0", "id": permID, "result": map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow-once"}}})
	ended, _ := w.waitFor("turn_ended", turnEnded(started.TurnID))
	if ended.Params.StopReason != "end_turn" {
		t.Fatalf("turn ended %s", ended.Raw)
	}
	// A late answer to the same request is refused with a JSON-RPC error on the socket.
	w.send(map[string]any{"jsonrpc": "2.0", "id": permID, "result": map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow-once"}}})
	w.waitFor("already-resolved error", func(f frame) bool { return f.Error != nil && f.Error.Code == -32010 })

	frames := w.snapshot()
	last := checkContiguous(t, frames, 1)
	kinds := map[string]int{}
	var text strings.Builder
	for _, f := range frames {
		if f.Method == "session/update" && f.updateKind() != "available_commands_update" {
			if f.Params.SessionID != s.ID {
				t.Fatalf("frame carries agent session id: %s", f.Raw)
			}
			if f.Params.Meta.Gateway.TurnID == "" || f.Params.Meta.Gateway.Epoch != s.Epoch {
				t.Fatalf("frame meta: %s", f.Raw)
			}
			kinds[f.updateKind()]++
			if f.updateKind() == "agent_message_chunk" {
				var u struct{ Content struct{ Text string } }
				_ = json.Unmarshal(f.Params.Update, &u)
				text.WriteString(u.Content.Text)
			}
		}
	}
	for _, k := range []string{"user_message_chunk", "agent_thought_chunk", "agent_message_chunk", "plan", "tool_call", "tool_call_update", "usage_update"} {
		if kinds[k] == 0 {
			t.Errorf("no %s frame; kinds %v", k, kinds)
		}
	}
	if !strings.HasPrefix(text.String(), "You said: hello gateway world") || !strings.Contains(text.String(), "Done.") {
		t.Errorf("streamed text %q", text.String())
	}
	var permResolved bool
	for _, f := range frames {
		if f.Method == "_gateway/permission_resolved" && strings.Contains(string(f.Raw), `"by":"client"`) && strings.Contains(string(f.Raw), `"allowed":true`) {
			permResolved = true
		}
	}
	if !permResolved {
		t.Error("no permission_resolved frame by client")
	}

	// The edit tool call completed because we allowed it.
	if !containsFrame(frames, func(f frame) bool {
		return f.updateKind() == "tool_call_update" && strings.Contains(string(f.Params.Update), `"status":"completed"`) && strings.Contains(string(f.Params.Update), `"edit_`)
	}) {
		t.Error("edit tool call did not complete")
	}

	// wait=true answers with the turn's text; "quick" skips the tools.
	var res struct{ TurnID, StopReason, Text string }
	if code := g.do("POST", "/v1/sessions/"+s.ID+"/prompt?wait=true", `{"prompt":[{"type":"text","text":"quick"}]}`, &res); code != http.StatusOK {
		t.Fatalf("wait prompt: %d", code)
	}
	if res.StopReason != "end_turn" || res.Text != "You said: quick" {
		t.Fatalf("wait result %+v", res)
	}

	// Resume from the middle: replay exactly the rest, then replay_complete, no gap, no duplicate.
	mid := last / 2
	r := g.dial(fmt.Sprintf("/v1/sessions/%s/ws?after=%d&epoch=%s", s.ID, mid, s.Epoch))
	_, idx := r.waitFor("replay_complete", func(f frame) bool { return f.Method == "_gateway/replay_complete" })
	replayed := r.snapshot()[:idx]
	if got := checkContiguous(t, replayed, mid+1); got < last {
		t.Fatalf("replay ended at %d, want >= %d", got, last)
	}
	live := map[uint64]string{}
	for _, f := range frames {
		live[f.Params.Meta.Gateway.Seq] = string(f.Raw)
	}
	for _, f := range replayed {
		if seq := f.Params.Meta.Gateway.Seq; seq != 0 && seq <= last && string(f.Raw) != live[seq] {
			t.Fatalf("replayed frame differs from live frame:\n%s\n%s", f.Raw, live[seq])
		}
	}

	// A wrong epoch gets resync_required, never a partial replay.
	x := g.dial(fmt.Sprintf("/v1/sessions/%s/ws?after=3&epoch=other", s.ID))
	f, _ := x.waitFor("resync_required", func(f frame) bool { return f.Method != "" })
	if f.Method != "_gateway/resync_required" || f.Params.Reason != "epoch_changed" {
		t.Fatalf("first frame %s", f.Raw)
	}

	// DELETE closes the session's sockets with 4009 and the session is gone.
	if code := g.do("DELETE", "/v1/sessions/"+s.ID, nil, nil); code != http.StatusNoContent {
		t.Fatalf("delete: %d", code)
	}
	if st := w.waitClosed(); st != 4009 {
		t.Fatalf("close status %d, want 4009", st)
	}
	if code := g.do("GET", "/v1/sessions/"+s.ID, nil, nil); code != http.StatusNotFound {
		t.Fatalf("get after delete: %d", code)
	}
	// A socket to an unknown session is closed with 4004.
	if st := g.dial("/v1/sessions/nope/ws").waitClosed(); st != 4004 {
		t.Fatalf("unknown session close %d", st)
	}
}

func containsFrame(frames []frame, pred func(frame) bool) bool {
	for _, f := range frames {
		if pred(f) {
			return true
		}
	}
	return false
}

// TestDemoDenyOverRESTAndCancel denies the edit over REST (the tool call fails), then cancels a turn while its
// permission is pending: the request is resolved cancelled and the turn ends cancelled.
func TestDemoDenyOverRESTAndCancel(t *testing.T) {
	g := startGateway(t)
	s := g.createSession(`{"permissionPolicy":"ask"}`)
	w := g.dial("/v1/sessions/" + s.ID + "/ws")

	var started struct{ TurnID string }
	g.do("POST", "/v1/sessions/"+s.ID+"/prompt", `{"text":"deny me"}`, &started)
	perm, _ := w.waitFor("permission", isPermissionRequest)
	var permID string
	_ = json.Unmarshal(perm.ID, &permID)

	var list struct {
		Permissions []struct{ ID string } `json:"permissions"`
	}
	if g.do("GET", "/v1/sessions/"+s.ID+"/permissions", nil, &list); len(list.Permissions) != 1 || list.Permissions[0].ID != permID {
		t.Fatalf("pending list %+v", list)
	}
	var prob struct{ Code string }
	if code := g.do("POST", "/v1/sessions/"+s.ID+"/permissions/"+permID, `{"optionId":"no-such-option"}`, &prob); code != http.StatusUnprocessableEntity || prob.Code != "unknown_option" {
		t.Fatalf("unknown option: %d %+v", code, prob)
	}
	if code := g.do("POST", "/v1/sessions/"+s.ID+"/permissions/"+permID, `{"optionId":"reject-once"}`, nil); code != http.StatusOK {
		t.Fatalf("reject: %d", code)
	}
	if code := g.do("POST", "/v1/sessions/"+s.ID+"/permissions/"+permID, `{"optionId":"allow-once"}`, &prob); code != http.StatusConflict || prob.Code != "already_resolved" {
		t.Fatalf("late answer: %d %+v", code, prob)
	}
	w.waitFor("turn_ended", turnEnded(started.TurnID))
	if !containsFrame(w.snapshot(), func(f frame) bool {
		return f.updateKind() == "tool_call_update" && strings.Contains(string(f.Params.Update), `"status":"failed"`)
	}) {
		t.Fatal("denied edit did not fail")
	}

	// Cancel while a permission is pending.
	var second struct{ TurnID string }
	g.do("POST", "/v1/sessions/"+s.ID+"/prompt", `{"text":"cancel me"}`, &second)
	w.waitFor("second permission", func(f frame) bool { return isPermissionRequest(f) && f.Params.Meta.Gateway.TurnID == second.TurnID })
	if code := g.do("POST", "/v1/sessions/"+s.ID+"/cancel", nil, nil); code != http.StatusAccepted {
		t.Fatalf("cancel: %d", code)
	}
	ended, _ := w.waitFor("cancelled turn_ended", turnEnded(second.TurnID))
	if ended.Params.StopReason != "cancelled" {
		t.Fatalf("stop reason %s", ended.Raw)
	}
	if !containsFrame(w.snapshot(), func(f frame) bool {
		return f.Method == "_gateway/permission_resolved" && f.Params.Meta.Gateway.TurnID == second.TurnID && strings.Contains(string(f.Raw), `"by":"cancel"`)
	}) {
		t.Fatal("pending permission not resolved by cancel")
	}
	if code := g.do("POST", "/v1/sessions/"+s.ID+"/cancel", nil, &prob); code != http.StatusConflict || prob.Code != "no_turn" {
		t.Fatalf("cancel when idle: %d %+v", code, prob)
	}
}

// TestShutdownClosesSocketsWith1001 stops the gateway with a socket open: the client sees 1001 and run
// returns.
func TestShutdownClosesSocketsWith1001(t *testing.T) {
	g := startGateway(t)
	s := g.createSession(nil)
	w := g.dial("/v1/sessions/" + s.ID + "/ws")
	w.waitFor("replay_complete", func(f frame) bool { return f.Method == "_gateway/replay_complete" })
	if err := g.stop(); err != nil {
		t.Fatalf("run returned %v", err)
	}
	if st := w.waitClosed(); st != websocket.StatusGoingAway {
		t.Fatalf("close status %d, want 1001", st)
	}
}
