package main

import (
	"context"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/acp-gateway/gateway/internal/agents/demo"
)

// turnJSON is a waiting call's answer: prompt?wait=true, permissions/{pid}?wait=true, GET turn.
type turnJSON struct {
	TurnID      string `json:"turnId"`
	Status      string `json:"status"`
	StopReason  string `json:"stopReason"`
	Text        string `json:"text"`
	Truncated   *bool  `json:"truncated"`
	Permissions []struct {
		ID       string `json:"id"`
		TurnID   string `json:"turnId"`
		ToolCall struct {
			Title string `json:"title"`
			Kind  string `json:"kind"`
		} `json:"toolCall"`
		Options []struct {
			OptionID string `json:"optionId"`
		} `json:"options"`
	} `json:"permissions"`
	PermissionID string `json:"permissionId"`
	Outcome      struct {
		Outcome  string `json:"outcome"`
		OptionID string `json:"optionId"`
		Allowed  bool   `json:"allowed"`
	} `json:"outcome"`
}

// TestWaitStopsWhereTheUserIsNeeded walks a turn with waiting calls only: the prompt's wait stops at the
// permission request, a second shell joins the turn, the answer's wait runs to the end; a quick turn answers
// as before (plus status "ended").
func TestWaitStopsWhereTheUserIsNeeded(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	s := g.createSession(nil)
	sp := "/v1/sessions/" + s.ID

	var quick turnJSON
	if code := g.do("POST", sp+"/prompt?wait=true", `{"text":"quick"}`, &quick); code != http.StatusOK ||
		quick.Status != "ended" || quick.StopReason != "end_turn" || quick.Text != "You said: quick" || quick.Truncated == nil || len(quick.Permissions) != 0 {
		t.Fatalf("quick turn: %d %+v", code, quick)
	}

	var asked turnJSON
	if code := g.do("POST", sp+"/prompt?wait=true", `{"text":"edit please"}`, &asked); code != http.StatusOK ||
		asked.Status != "awaiting_permission" || asked.StopReason != "" || asked.Text != "You said: edit please" || len(asked.Permissions) != 1 {
		t.Fatalf("prompt wait: %d %+v", code, asked)
	}
	p := asked.Permissions[0]
	if p.TurnID != asked.TurnID || p.ToolCall.Title != "Edit notes.md" || p.ToolCall.Kind != "edit" || len(p.Options) != 3 {
		t.Fatalf("permission %+v", p)
	}
	// Another shell joins: now, and waiting (the turn waits for the user, so at once).
	for _, q := range []string{"", "?wait=true", "?wait=true&timeout=1h"} {
		var joined turnJSON
		if code := g.do("GET", sp+"/turn"+q, nil, &joined); code != http.StatusOK || joined.Status != "awaiting_permission" ||
			joined.TurnID != asked.TurnID || len(joined.Permissions) != 1 || joined.Permissions[0].ID != p.ID {
			t.Fatalf("GET turn%s: %d %+v", q, code, joined)
		}
	}
	var ended turnJSON
	if code := g.do("POST", sp+"/permissions/"+p.ID+"?wait=true", `{"optionId":"allow-once"}`, &ended); code != http.StatusOK ||
		ended.PermissionID != p.ID || !ended.Outcome.Allowed || ended.Outcome.OptionID != "allow-once" ||
		ended.Status != "ended" || ended.StopReason != "end_turn" || ended.TurnID != asked.TurnID || ended.Text != "You said: edit please"+demo.ClosingApplied {
		t.Fatalf("answer wait: %d %+v", code, ended)
	}
	var after turnJSON
	if code := g.do("GET", sp+"/turn?wait=true", nil, &after); code != http.StatusOK || after.Status != "ended" || after.TurnID != asked.TurnID || after.Text != ended.Text {
		t.Fatalf("GET turn after the end: %d %+v", code, after)
	}
	// A plain answer keeps its old shape.
	var plain map[string]any
	if code := g.do("POST", sp+"/permissions/"+p.ID, `{"optionId":"allow-once"}`, &plain); code != http.StatusConflict {
		t.Fatalf("late answer: %d %v", code, plain)
	}
}

// TestWaitUnderApprovePolicyNeverStops: the policy answers the request; the wait runs to the turn's end.
func TestWaitUnderApprovePolicyNeverStops(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	s := g.createSession(map[string]string{"permissionPolicy": "approve-all"})
	var res turnJSON
	if code := g.do("POST", "/v1/sessions/"+s.ID+"/prompt?wait=true", `{"text":"edit please"}`, &res); code != http.StatusOK ||
		res.Status != "ended" || res.Text != "You said: edit please"+demo.ClosingApplied {
		t.Fatalf("prompt wait: %d %+v", code, res)
	}
}

// TestWaitTimeoutLeavesTheTurnRunning: a wait whose timeout passes answers 202 running; the turn goes on,
// and a later wait sees it through (here: cancelled).
func TestWaitTimeoutLeavesTheTurnRunning(t *testing.T) {
	t.Parallel()
	g := startGateway(t, "--demo-delay", "1h") // the turn stays between its steps
	s := g.createSession(nil)
	sp := "/v1/sessions/" + s.ID
	var res turnJSON
	if code := g.do("POST", sp+"/prompt?wait=true&timeout=20ms", `{"text":"edit please"}`, &res); code != http.StatusAccepted ||
		res.Status != "running" || res.TurnID == "" || res.StopReason != "" {
		t.Fatalf("timed-out prompt wait: %d %+v", code, res)
	}
	var again turnJSON
	if code := g.do("GET", sp+"/turn?wait=true&timeout=20ms", nil, &again); code != http.StatusAccepted || again.Status != "running" || again.TurnID != res.TurnID {
		t.Fatalf("timed-out turn wait: %d %+v", code, again)
	}
	done := make(chan turnJSON, 1)
	go func() {
		var ended turnJSON
		g.do("GET", sp+"/turn?wait=true", nil, &ended)
		done <- ended
	}()
	if code := g.do("POST", sp+"/cancel", nil, nil); code != http.StatusAccepted {
		t.Fatalf("cancel: %d", code)
	}
	if ended := <-done; ended.Status != "ended" || ended.StopReason != "cancelled" || ended.TurnID != res.TurnID {
		t.Fatalf("wait through the cancel: %+v", ended)
	}
}

// TestWaitClientGoneLeavesNoWaiter: a waiting client that hangs up leaves no goroutine waiting on the turn,
// and the turn goes on. Not parallel: it counts the process's waiters.
func TestWaitClientGoneLeavesNoWaiter(t *testing.T) {
	g := startGateway(t, "--demo-delay", "1h")
	s := g.createSession(nil)
	sp := "/v1/sessions/" + s.ID
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, _, err := g.httpDo(ctx, "POST", sp+"/prompt?wait=true", `{"text":"edit please"}`, nil)
		done <- err
	}()
	waitWaiters(t, 1)
	cancel()
	if err := <-done; err == nil {
		t.Fatal("the cancelled request succeeded")
	}
	waitWaiters(t, 0)
	var st turnJSON
	if code := g.do("GET", sp+"/turn", nil, &st); code != http.StatusOK || st.Status != "running" {
		t.Fatalf("the turn after the client left: %d %+v", code, st)
	}
}

// waitWaiters waits (bounded) until exactly n goroutines of the process are in the core's Session.AwaitTurn.
func waitWaiters(t *testing.T, n int) {
	t.Helper()
	buf := make([]byte, 1<<22)
	deadline := time.Now().Add(20 * time.Second)
	for {
		got := strings.Count(string(buf[:runtime.Stack(buf, true)]), "core.(*Session).AwaitTurn(")
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines in AwaitTurn, want %d", got, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
