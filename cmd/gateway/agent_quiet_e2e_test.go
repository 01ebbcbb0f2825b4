package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestAgentQuietNoticeE2E: a real agent process that stops sending frames mid-turn (after writing to its
// stderr) gets a `_gateway/agent_quiet` notice on the session socket with its stderr, and the gateway logs
// the same lines at info. The timing itself is TestQuietTurnNotice's (internal/sessions, fake time).
func TestAgentQuietNoticeE2E(t *testing.T) {
	g, _ := testAgentGateway(t, "stubborn", "--agent-quiet-notice", "200ms")
	s := g.createSession(nil)
	w := g.dial("/v1/sessions/" + s.ID + "/ws")
	var started struct{ TurnID string }
	g.do("POST", "/v1/sessions/"+s.ID+"/prompt", `{"text":"run forever"}`, &started)
	f, _ := w.waitFor("agent_quiet", func(f frame) bool { return f.Method == "_gateway/agent_quiet" })
	var p struct {
		Params struct {
			TurnID     string   `json:"turnId"`
			Seconds    *int64   `json:"seconds"`
			StderrTail []string `json:"stderrTail"`
		} `json:"params"`
	}
	if err := json.Unmarshal([]byte(f.Raw), &p); err != nil {
		t.Fatal(err)
	}
	if p.Params.TurnID != started.TurnID || f.Params.Meta.Gateway.TurnID != started.TurnID || p.Params.Seconds == nil ||
		len(p.Params.StderrTail) != 1 || !strings.HasPrefix(p.Params.StderrTail[0], "testagent: child ") {
		t.Fatalf("notice %s, want turn %s and the agent's stderr line", f.Raw, started.TurnID)
	}
	if logs := g.logs.String(); !strings.Contains(logs, `msg="agent quiet: no frame from the agent during the turn"`) ||
		!strings.Contains(logs, `stderr="testagent: child `) {
		t.Errorf("no info line with the agent's stderr:\n%s", logs)
	}
}
