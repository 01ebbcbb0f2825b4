package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

func sessionFailed(f frame) bool {
	return f.Method == "_gateway/session_status" && strings.Contains(string(f.Raw), `"status":"failed"`)
}

// TestDeliveryCancelEscalation: an agent that ignores session/cancel (and has an open tool call and a child
// process) is given --cancel-grace; then the turn ends cancelled, the open tool call is closed failed, the
// session fails with a reason and the agent's whole process group is gone.
func TestDeliveryCancelEscalation(t *testing.T) {
	t.Parallel()
	g, bin := testAgentGateway(t, "stubborn", "--cancel-grace", "500ms")
	s := g.createSession(nil)
	w := g.dial("/v1/sessions/" + s.ID + "/ws")
	var started struct{ TurnID string }
	g.do("POST", "/v1/sessions/"+s.ID+"/prompt", `{"text":"run forever"}`, &started)
	w.waitFor("working chunk", func(f frame) bool { return f.updateKind() == "agent_message_chunk" })
	pid := agentPid(t, bin)
	if code := g.do("POST", "/v1/sessions/"+s.ID+"/cancel", nil, nil); code != http.StatusAccepted {
		t.Fatalf("cancel: %d", code)
	}
	ended, endIdx := w.waitFor("turn_ended", turnEnded(started.TurnID))
	if ended.Params.StopReason != "cancelled" {
		t.Fatalf("turn_ended %s", ended.Raw)
	}
	w.waitFor("session failed", sessionFailed)
	frames := w.snapshot()
	closer := -1
	for i, f := range frames[:endIdx] {
		var u struct {
			ToolCallID string `json:"toolCallId"`
			Status     string `json:"status"`
		}
		if f.updateKind() == "tool_call_update" && json.Unmarshal(f.Params.Update, &u) == nil && u.ToolCallID == "stub_1" && u.Status == "failed" {
			closer = i
		}
	}
	if closer < 0 {
		t.Errorf("the open tool call stub_1 got no terminal failed tool_call_update before turn_ended:\n%s", w.dump())
	}
	st := g.waitStatus(t, s.ID, "failed")
	if st.StatusReason == "" || st.CurrentTurn != nil {
		t.Fatalf("after escalation: %+v", st)
	}
	t.Logf("status reason: %q", st.StatusReason)
	waitGroupGone(t, pid)
	var prob struct{ Code string }
	if code := g.do("POST", "/v1/sessions/"+s.ID+"/prompt", `{"text":"again"}`, &prob); code != http.StatusConflict || prob.Code != "session_failed" {
		t.Fatalf("prompt on a failed session: %d %+v", code, prob)
	}
}

// TestDeliveryAgentGarbageOnStdout: non-JSON lines between an agent's messages do not hurt the session: the
// turn ends end_turn with all its text, and the next turn works too.
func TestDeliveryAgentGarbageOnStdout(t *testing.T) {
	t.Parallel()
	g, _ := testAgentGateway(t, "garbage")
	s := g.createSession(nil)
	for i := range 2 {
		var res struct{ StopReason, Text string }
		if code := g.do("POST", "/v1/sessions/"+s.ID+"/prompt?wait=true", `{"text":"x"}`, &res); code != http.StatusOK {
			t.Fatalf("turn %d: %d", i, code)
		}
		if res.StopReason != "end_turn" || res.Text != "one two three" {
			t.Fatalf("turn %d: %+v", i, res)
		}
	}
	if st := g.waitStatus(t, s.ID, "idle"); st.StatusReason != "" {
		t.Fatalf("%+v", st)
	}
	// The SDK logs every line it cannot parse, whole, through the gateway's logger: a chatty or broken agent
	// must not be able to write megabytes into the gateway's log.
	logs := g.logs.String()
	t.Logf("gateway log: %d bytes; %d lines mention %q", len(logs), strings.Count(logs, "this is not json"), "this is not json")
	if len(logs) > 256<<10 {
		t.Errorf("two turns with a 1 MiB garbage line each left %d KiB in the gateway's log", len(logs)>>10)
	}
}

// TestDeliveryAgentHugeLine: a line over the SDK's 10 MiB limit ends the agent connection: the turn ends with
// an error, the session fails with a reason, the REST waiter gets 502, and the agent process is gone, with
// no hang.
func TestDeliveryAgentHugeLine(t *testing.T) {
	t.Parallel()
	g, bin := testAgentGateway(t, "huge")
	s := g.createSession(nil)
	w := g.dial("/v1/sessions/" + s.ID + "/ws")
	type res struct {
		code int
		body []byte
	}
	done := make(chan res, 1)
	go func() {
		code, body, _ := g.httpDo(context.Background(), "POST", "/v1/sessions/"+s.ID+"/prompt?wait=true", `{"text":"x"}`, nil)
		done <- res{code, body}
	}()
	w.waitFor("first chunk", func(f frame) bool { return f.updateKind() == "agent_message_chunk" })
	pid := agentPid(t, bin)
	ended, _ := w.waitFor("turn_ended", func(f frame) bool { return f.Method == "_gateway/turn_ended" })
	if !strings.Contains(string(ended.Raw), `"error"`) {
		t.Fatalf("turn_ended without error: %s", ended.Raw)
	}
	var r res
	select {
	case r = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the waiting prompt hung")
	}
	if r.code != http.StatusBadGateway || !strings.Contains(string(r.body), "turn_failed") {
		t.Fatalf("waiting prompt: %d %s", r.code, r.body)
	}
	w.waitFor("session failed", sessionFailed)
	st := g.waitStatus(t, s.ID, "failed")
	t.Logf("huge line: status reason %q; turn_ended %s", st.StatusReason, ended.Raw)
	if !strings.Contains(st.StatusReason, "line") {
		t.Fatalf("status reason %q does not say the agent wrote a line too long", st.StatusReason)
	}
	waitGroupGone(t, pid)
}

// TestDeliveryAgentExitsMidTurn: the agent exits with status 3 in the middle of a turn.
func TestDeliveryAgentExitsMidTurn(t *testing.T) {
	t.Parallel()
	g, _ := testAgentGateway(t, "exit")
	s := g.createSession(nil)
	w := g.dial("/v1/sessions/" + s.ID + "/ws")
	var prob struct{ Code, Detail string }
	code := g.do("POST", "/v1/sessions/"+s.ID+"/prompt?wait=true", `{"text":"x"}`, &prob)
	if code != http.StatusBadGateway || prob.Code != "turn_failed" {
		t.Fatalf("waiting prompt: %d %+v", code, prob)
	}
	ended, _ := w.waitFor("turn_ended", func(f frame) bool { return f.Method == "_gateway/turn_ended" })
	if !strings.Contains(string(ended.Raw), `"error"`) {
		t.Fatalf("turn_ended %s", ended.Raw)
	}
	f, _ := w.waitFor("session failed", sessionFailed)
	st := g.waitStatus(t, s.ID, "failed")
	if !strings.Contains(st.StatusReason, "exit status 3") || !strings.Contains(string(f.Raw), "exit status 3") {
		t.Fatalf("status reason %q, frame %s: want the exit status", st.StatusReason, f.Raw)
	}
	// The open tool call is closed for clients (agent_error).
	var closed bool
	for _, f := range w.snapshot() {
		if f.updateKind() == "tool_call_update" && strings.Contains(string(f.Params.Update), `"exit_1"`) && strings.Contains(string(f.Params.Update), `"failed"`) {
			closed = true
		}
	}
	if !closed {
		t.Errorf("open tool call exit_1 not closed failed:\n%s", w.dump())
	}
}

// TestDeliveryCloseIsNotFailure: DELETE of a healthy session with an external agent: clients see
// session_status closed and never failed.
func TestDeliveryCloseIsNotFailure(t *testing.T) {
	t.Parallel()
	g, _ := testAgentGateway(t, "garbage")
	bad := 0
	const rounds = 20
	for i := range rounds {
		s := g.createSession(nil)
		w := g.dial("/v1/sessions/" + s.ID + "/ws")
		w.waitFor("replay_complete", func(f frame) bool { return f.Method == "_gateway/replay_complete" })
		if code := g.do("DELETE", "/v1/sessions/"+s.ID, nil, nil); code != http.StatusNoContent {
			t.Fatalf("delete: %d", code)
		}
		w.waitClosed()
		for _, f := range w.snapshot() {
			if sessionFailed(f) {
				bad++
				t.Logf("round %d: %s", i, f.Raw)
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d closes reported the session failed first", bad, rounds)
	}
}

// TestDeliveryRawFramesByteIdentical: frames the agent wrote with bytes Go's encoder would not produce (raw
// '<' and '&', U+2028, spaces, 2.50, unknown variants and fields, null) reach clients intact, and the socket,
// the SSE stream and the JSON pages all serve the same bytes.
func TestDeliveryRawFramesByteIdentical(t *testing.T) {
	t.Parallel()
	g, _ := testAgentGateway(t, "raw")
	s := g.createSession(nil)
	if code := g.do("POST", "/v1/sessions/"+s.ID+"/prompt?wait=true", `{"text":"x"}`, nil); code != http.StatusOK {
		t.Fatalf("prompt: %d", code)
	}
	full := g.fullLogWS(t, s.ID, s.Epoch)
	var all bytes.Buffer
	for _, e := range full {
		all.Write(e.Raw)
		all.WriteByte('\n')
	}
	for _, want := range []string{`"a<b && c>d"`, "line\u2028sep é", `"x-unknown":{"k":null}`, `"payload": [1, 2.50, "<tag>"]`, `"some_future_update"`, `"vendor":true`} {
		if !strings.Contains(all.String(), want) {
			t.Errorf("socket frames lost %q:\n%s", want, all.String())
		}
	}
	st := g.openSSE(t, "/v1/sessions/"+s.ID+"/events", nil)
	checkSSEFrames(t, st.until(isNote("_gateway/replay_complete")), full, 1)
	pages, _ := g.walkPages(t, s.ID, 1000)
	for i, p := range pages {
		if !bytes.Equal(p.Raw, full[i].Raw) {
			t.Errorf("JSON page frame %d is not the socket's bytes:\npage   %s\nsocket %s", i+1, p.Raw, full[i].Raw)
		}
	}
	_ = fmt.Sprint
}
