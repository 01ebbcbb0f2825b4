package httpapi

import (
	"net/http"
	"testing"

	"github.com/acp-gateway/gateway/internal/agents"
)

// TestFailedTurnAnswer: a turn whose agent died answers the wait and `GET …/turn` with 502 turn_failed naming
// the turn and its outcome, and the session's lastTurn says error/failed, never end_turn.
func TestFailedTurnAnswer(t *testing.T) {
	exiter := agents.Spec{Name: "exiter", Kind: agents.KindACP, Command: testAgentBin(t), Args: []string{"-mode", "exit"}}
	_, base := reattachServer(t, exiter)
	code, created := call(t, "POST", base+"/v1/sessions", `{"agent":"exiter"}`)
	if code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, created)
	}
	id := created["id"].(string)
	for _, req := range []struct{ method, path, body string }{
		{"POST", "/prompt?wait=true", `{"text":"die"}`},
		{"GET", "/turn", ""},
		{"GET", "/turn?wait=true", ""},
	} {
		code, p := call(t, req.method, base+"/v1/sessions/"+id+req.path, req.body)
		if code != http.StatusBadGateway || p["code"] != "turn_failed" || p["turnId"] == "" || p["turnId"] == nil ||
			p["stopReason"] != "error" || p["turnOutcome"] != "failed" {
			t.Fatalf("%s %s: %d %v", req.method, req.path, code, p)
		}
	}
	code, v := call(t, "GET", base+"/v1/sessions/"+id, "")
	lt, _ := v["lastTurn"].(map[string]any)
	if code != http.StatusOK || lt == nil || lt["stopReason"] != "error" || lt["turnOutcome"] != "failed" || lt["error"] == nil {
		t.Fatalf("lastTurn of the failed turn: %d %v", code, lt)
	}
}
