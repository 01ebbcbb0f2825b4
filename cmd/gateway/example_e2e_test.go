package main

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// These tests run the acp-go-sdk example agent as a real subprocess. Its turn sleeps about a second between
// steps and asks permission for an edit after about four seconds.

func exampleGateway(t *testing.T) (*gateway, sessionJSON, *wsClient) {
	g, s, w, _ := exampleGatewayAt(t)
	return g, s, w
}

// exampleGatewayAt runs the example agent through a per-test symlink, so the test can find its own process.
func exampleGatewayAt(t *testing.T) (*gateway, sessionJSON, *wsClient, string) {
	bin := t.TempDir() + "/example-agent"
	if err := os.Symlink(exampleAgent, bin); err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, "--agent", "example="+bin, "--default-agent", "example", "--cancel-grace", "5s")
	s := g.createSession(`{"agent":"example"}`)
	if s.Agent != "example" || s.Status != "idle" {
		t.Fatalf("session %+v", s)
	}
	w := g.dial("/v1/sessions/" + s.ID + "/ws")
	return g, s, w, bin
}

func permIDOf(f frame) string {
	var id string
	_ = json.Unmarshal(f.ID, &id)
	return id
}

func TestExampleAgentAllow(t *testing.T) {
	t.Parallel()
	g, s, w := exampleGateway(t)
	var started struct{ TurnID string }
	g.do("POST", "/v1/sessions/"+s.ID+"/prompt", `{"text":"do it"}`, &started)
	perm, _ := w.waitFor("permission", isPermissionRequest)
	// The tool_call the agent sent before asking reached clients before the request (wire order).
	if !containsFrame(w.snapshot(), func(f frame) bool {
		return f.updateKind() == "tool_call" && strings.Contains(string(f.Params.Update), `"call_2"`)
	}) {
		t.Fatalf("permission request overtook its tool_call:\n%s", w.dump())
	}
	if code := g.do("POST", "/v1/sessions/"+s.ID+"/permissions/"+permIDOf(perm), `{"optionId":"allow"}`, nil); code != http.StatusOK {
		t.Fatalf("allow: %d", code)
	}
	ended, _ := w.waitFor("turn_ended", turnEnded(started.TurnID))
	if ended.Params.StopReason != "end_turn" {
		t.Fatalf("ended %s", ended.Raw)
	}
	if !containsFrame(w.snapshot(), func(f frame) bool {
		return f.updateKind() == "tool_call_update" && strings.Contains(string(f.Params.Update), `"call_2"`) && strings.Contains(string(f.Params.Update), `"completed"`)
	}) {
		t.Fatal("allowed call_2 did not complete")
	}
	checkContiguous(t, w.snapshot(), 1)
}

func TestExampleAgentReject(t *testing.T) {
	t.Parallel()
	g, s, w := exampleGateway(t)
	var res struct{ TurnID, Status, StopReason, Text string }
	// The prompt's wait stops at the permission request (or, were the answer below quicker, at the turn's end).
	done := make(chan int, 1)
	go func() {
		done <- g.do("POST", "/v1/sessions/"+s.ID+"/prompt?wait=true", `{"text":"do it"}`, &res)
	}()
	perm, _ := w.waitFor("permission", isPermissionRequest)
	w.send(map[string]any{"jsonrpc": "2.0", "id": permIDOf(perm), "result": map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "reject"}}})
	if code := <-done; code != http.StatusOK {
		t.Fatalf("wait prompt: %d", code)
	}
	if res.Status == "awaiting_permission" {
		w.waitFor("resolved", resolvedFor(permIDOf(perm)))
		if code := g.do("GET", "/v1/sessions/"+s.ID+"/turn?wait=true", nil, &res); code != http.StatusOK {
			t.Fatalf("wait turn: %d", code)
		}
	}
	if res.StopReason != "end_turn" || !strings.Contains(res.Text, "prefer not to make that change") {
		t.Fatalf("result %+v", res)
	}
}

func TestExampleAgentCancelWhilePermissionPending(t *testing.T) {
	t.Parallel()
	g, s, w := exampleGateway(t)
	var started struct{ TurnID string }
	g.do("POST", "/v1/sessions/"+s.ID+"/prompt", `{"text":"do it"}`, &started)
	perm, _ := w.waitFor("permission", isPermissionRequest)
	if code := g.do("POST", "/v1/sessions/"+s.ID+"/cancel", nil, nil); code != http.StatusAccepted {
		t.Fatalf("cancel: %d", code)
	}
	ended, _ := w.waitFor("turn_ended", turnEnded(started.TurnID))
	if ended.Params.StopReason != "cancelled" {
		t.Fatalf("ended %s", ended.Raw)
	}
	var prob struct{ Code string }
	if code := g.do("POST", "/v1/sessions/"+s.ID+"/permissions/"+permIDOf(perm), `{"optionId":"allow"}`, &prob); code != http.StatusConflict || prob.Code != "already_resolved" {
		t.Fatalf("answer after cancel: %d %+v", code, prob)
	}
	// The open tool call is closed as failed for clients.
	if !containsFrame(w.snapshot(), func(f frame) bool { return f.Method == "_gateway/turn_ended" }) {
		t.Fatal("no turn_ended")
	}
	var view sessionJSON
	g.do("GET", "/v1/sessions/"+s.ID, nil, &view)
	if view.Status != "idle" || view.CurrentTurn != nil || len(view.PendingPermissions) != 0 {
		t.Fatalf("after cancel %+v", view)
	}
}

// TestExampleAgentKilledMidTurn kills the agent's process group with SIGKILL while a turn runs: clients are
// told (turn_ended with an error, session failed), the REST waiter gets a problem, and no process is left.
func TestExampleAgentKilledMidTurn(t *testing.T) {
	t.Parallel()
	g, s, w, bin := exampleGatewayAt(t)
	done := make(chan int, 1)
	var prob struct{ Code string }
	go func() { done <- g.do("POST", "/v1/sessions/"+s.ID+"/prompt?wait=true", `{"text":"do it"}`, &prob) }()
	w.waitFor("first chunk", func(f frame) bool { return f.updateKind() == "agent_message_chunk" })
	pid := agentPid(t, bin)
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	ended, _ := w.waitFor("turn_ended", func(f frame) bool { return f.Method == "_gateway/turn_ended" })
	if !strings.Contains(string(ended.Raw), `"error":{`) || ended.Params.StopReason != "error" || !strings.Contains(string(ended.Raw), `"turnOutcome":"failed"`) {
		t.Fatalf("turn_ended %s", ended.Raw)
	}
	w.waitFor("session failed", func(f frame) bool {
		return f.Method == "_gateway/session_status" && strings.Contains(string(f.Raw), `"failed"`)
	})
	if code := <-done; code != http.StatusBadGateway || prob.Code != "turn_failed" {
		t.Fatalf("waiting prompt: %d %+v", code, prob)
	}
	var view sessionJSON
	g.do("GET", "/v1/sessions/"+s.ID, nil, &view)
	if view.Status != "failed" {
		t.Fatalf("status %s", view.Status)
	}
	deadline := time.Now().Add(10 * time.Second)
	for syscall.Kill(-pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("process group %d still alive", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// agentPid finds the example agent's pid among the test's children (it is its own group leader).
func agentPid(t *testing.T, bin string) int {
	t.Helper()
	self := os.Getpid()
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if !strings.HasPrefix(string(cmdline), bin+"\x00") {
			continue
		}
		f := strings.Fields(string(stat)[strings.LastIndexByte(string(stat), ')')+2:])
		if len(f) > 1 && f[1] == itoa(self) {
			return atoi(e.Name())
		}
	}
	t.Fatal("example agent process not found")
	return 0
}
