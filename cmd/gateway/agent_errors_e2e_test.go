package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// problemJSON is a problem+json answer.
type problemJSON struct {
	Status int    `json:"status"`
	Code   string `json:"code"`
	Detail string `json:"detail"`
}

// TestAgentStartErrorCarriesData: an agent that answers session/new with a JSON-RPC error tells the user why
// in its `data` (codex: "OPENAI_API_KEY is not set"); REST's problem detail and the gateway log carry it,
// with secrets redacted.
func TestAgentStartErrorCarriesData(t *testing.T) {
	g, _ := testAgentGateway(t, "startfail")
	var p problemJSON
	code := g.do("POST", "/v1/sessions", map[string]any{}, &p)
	if code != http.StatusBadGateway || p.Code != "agent_error" {
		t.Fatalf("create: %d %+v", code, p)
	}
	if !strings.Contains(p.Detail, "OPENAI_API_KEY is not set") {
		t.Errorf("detail %q lacks the agent's data", p.Detail)
	}
	if strings.Contains(p.Detail, "testagentsecret") || !strings.Contains(p.Detail, "[REDACTED]") {
		t.Errorf("detail %q: the secret in the agent's data is not redacted", p.Detail)
	}
	logs := g.logs.String()
	if !strings.Contains(logs, "OPENAI_API_KEY is not set") {
		t.Errorf("the log lacks the agent's data:\n%s", logs)
	}
	if strings.Contains(logs, "testagentsecret") {
		t.Errorf("the log holds the agent's secret:\n%s", logs)
	}
}

// TestAgentExitDuringStart: an agent that exits while starting is reported with its exit status and the tail
// of its stderr, not as a JSON-RPC internal error.
func TestAgentExitDuringStart(t *testing.T) {
	g, _ := testAgentGateway(t, "initexit")
	var p problemJSON
	code := g.do("POST", "/v1/sessions", map[string]any{}, &p)
	if code != http.StatusBadGateway || p.Code != "agent_error" {
		t.Fatalf("create: %d %+v", code, p)
	}
	if !strings.Contains(p.Detail, "agent exited with status 4") || !strings.Contains(p.Detail, "no credentials found in ~/.testagent") {
		t.Errorf("detail %q: want the exit status and the stderr tail", p.Detail)
	}
	if strings.Contains(p.Detail, "-32603") {
		t.Errorf("detail %q reports a JSON-RPC error for an agent that exited", p.Detail)
	}
}

// TestAgentCallErrorsCarryData: set_mode errors carry the agent's data too, and a failed turn shows in the
// session's snapshot (its last turn, with the error), not only in the log.
func TestAgentCallErrorsCarryData(t *testing.T) {
	g, _ := testAgentGateway(t, "rpcerrors")
	s := g.createSession(map[string]any{})
	var p problemJSON
	code := g.do("POST", "/v1/sessions/"+s.ID+"/mode", map[string]any{"modeId": "plan"}, &p)
	if code != http.StatusBadGateway || !strings.Contains(p.Detail, "mode locked") || !strings.Contains(p.Detail, "OPENAI_API_KEY is not set") {
		t.Errorf("set_mode: %d %+v: want the agent's data in the detail", code, p)
	}
	if strings.Contains(p.Detail, "testagentsecret") {
		t.Errorf("set_mode detail %q holds the secret", p.Detail)
	}

	code = g.do("POST", "/v1/sessions/"+s.ID+"/prompt?wait=true", map[string]any{"prompt": []any{map[string]any{"type": "text", "text": "hi"}}}, &p)
	if code != http.StatusBadGateway || p.Code != "turn_failed" {
		t.Fatalf("prompt: %d %+v", code, p)
	}
	if strings.Contains(p.Detail, "testagentsecret") || !strings.Contains(p.Detail, "OPENAI_API_KEY is not set") {
		t.Errorf("prompt detail %q: want the agent's data, redacted", p.Detail)
	}
	var turn problemJSON
	if code := g.do("GET", "/v1/sessions/"+s.ID+"/turn", nil, &turn); strings.Contains(turn.Detail, "testagentsecret") {
		t.Errorf("GET turn: %d, detail %q holds the secret", code, turn.Detail)
	}
	// `/acp` passes the agent's JSON-RPC error on: redacted too.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := dialACP(t, g, ctx, acpInitialize)
	for _, req := range []string{
		`{"jsonrpc":"2.0","id":2,"method":"session/load","params":{"sessionId":"` + s.ID + `","cwd":"` + s.Cwd + `","mcpServers":[]}}`,
		`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"` + s.ID + `","prompt":[{"type":"text","text":"hi"}]}}`,
		`{"jsonrpc":"2.0","id":4,"method":"session/set_mode","params":{"sessionId":"` + s.ID + `","modeId":"plan"}}`,
	} {
		if err := c.Write(ctx, websocket.MessageText, []byte(req)); err != nil {
			t.Fatal(err)
		}
	}
	for answered := 0; answered < 3; {
		_, data, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var m struct{ ID json.RawMessage }
		if json.Unmarshal(data, &m) != nil || m.ID == nil || strings.Contains(string(data), `"method"`) {
			continue
		}
		answered++
		if strings.Contains(string(data), "testagentsecret") {
			t.Errorf("/acp answer holds the secret: %s", data)
		}
	}
	var snap struct {
		LastTurn *struct {
			TurnID      string          `json:"turnId"`
			StopReason  string          `json:"stopReason"`
			TurnOutcome string          `json:"turnOutcome"`
			Error       json.RawMessage `json:"error"`
		} `json:"lastTurn"`
	}
	if code := g.do("GET", "/v1/sessions/"+s.ID, nil, &snap); code != http.StatusOK {
		t.Fatalf("get: %d", code)
	}
	if snap.LastTurn == nil || snap.LastTurn.StopReason != "error" || snap.LastTurn.TurnOutcome != "failed" || !strings.Contains(string(snap.LastTurn.Error), "OPENAI_API_KEY is not set") {
		t.Fatalf("snapshot's lastTurn = %+v, want the failed turn with its error", snap.LastTurn)
	}
	if strings.Contains(string(snap.LastTurn.Error), "testagentsecret") {
		t.Errorf("snapshot's lastTurn error holds the secret: %s", snap.LastTurn.Error)
	}
}
